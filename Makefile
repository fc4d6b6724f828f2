# icebook: two commands for a fresh machine.
#   make lab   - the workbench on the embedded demo warehouse (JupyterLab, tour notebook)
#   make test  - everything: lint, types, layers, unit, Spark, notebook and browser tests
#   make book  - every notebook executed and rendered to static HTML in build/book (open index.html)

VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.icebook-installed
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: lab test book env system-deps lint demo-warehouse clean-cache labextension

VENV_DIR = $(abspath $(VENV))
# The lake browser's JupyterLab extension, built from labextension/ with jlpm (JupyterLab's yarn) and
# @jupyterlab/builder from npm, once: again only when its sources or lock file change.
LAB_EXT := labextension/dist/package.json
LAB_SOURCES := labextension/package.json labextension/yarn.lock labextension/tsconfig.json labextension/install.json \
	$(wildcard labextension/src/*.ts labextension/style/*)

# Azurite (Azure Blob emulator) for the Azure tests, from npm into the virtualenv's node/ folder.
AZURITE := azurite@3.35.0

$(STAMP): pyproject.toml Makefile icebook/engines/spark_jars.py $(LAB_EXT) jupyter-config/server-config/icebook.json
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@# An editable install skips the wheel's data files: link the built extension and copy the server
	@# extension's config into the venv, where a wheel would put them.
	@mkdir -p $(VENV)/share/jupyter/labextensions $(VENV)/etc/jupyter/jupyter_server_config.d
	rm -rf $(VENV)/share/jupyter/labextensions/icebook-lake-browser
	ln -s $(CURDIR)/labextension/dist $(VENV)/share/jupyter/labextensions/icebook-lake-browser
	cp jupyter-config/server-config/icebook.json $(VENV)/etc/jupyter/jupyter_server_config.d/icebook.json
	@command -v npm >/dev/null || { echo "icebook: npm is needed (make system-deps installs it)" >&2; exit 1; }
	npm install --prefix $(VENV)/node --no-audit --no-fund --silent $(AZURITE)
	@# Iceberg's Spark runtime, cloud bundles and JDBC drivers, by Maven coordinates into Spark's Ivy cache
	@# now, so tests and the lab never wait on a download (a no-op once cached).
	$(PY) -m icebook.engines.spark_jars
	@touch $@

$(LAB_EXT): $(LAB_SOURCES)
	@command -v node >/dev/null 2>&1 || scripts/install-system-deps.sh
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q 'jupyterlab>=4.2,<5'
	cd labextension && nice $(VENV_DIR)/bin/jlpm install --immutable
	cd labextension && JUPYTERLAB_STAGING="$$($(VENV_DIR)/bin/python -c 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging"))')" \
		PATH="$(VENV_DIR)/bin:$$PATH" nice $(VENV_DIR)/bin/jlpm build

labextension: $(LAB_EXT)

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
