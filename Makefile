# icebook: two commands for a fresh machine.
#   make lab   - the workbench on the embedded demo warehouse (JupyterLab, tour notebook)
#   make test  - everything: lint, types, layers, unit, Spark, notebook and browser tests
#   make book  - every notebook executed and rendered to static HTML in build/book (open index.html)

VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.icebook-installed
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: lab test book env system-deps lint demo-warehouse clean-cache

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

env: $(STAMP)

system-deps:
	@scripts/install-system-deps.sh

demo-warehouse: env system-deps
	$(PY) -m icebook.scenarios.build demo

lab: demo-warehouse
	@echo "icebook: starting JupyterLab; open the URL printed below (http://127.0.0.1:8888/lab/...)"
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u)),--allow-root,) notebooks/00_tour.ipynb

book: demo-warehouse
	$(PY) -m icebook.book build/book

lint: env
	$(VENV)/bin/ruff check icebook tests benchmarks
	$(VENV)/bin/ruff format --check icebook tests benchmarks
	$(VENV)/bin/mypy

test: env system-deps lint
	$(VENV)/bin/pytest

clean-cache:
	rm -rf "$${ICEBOOK_HOME:-$$HOME/.cache/icebook}"
