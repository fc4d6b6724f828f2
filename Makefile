# icebook: two commands for a fresh machine.
#   make lab   - the workbench on the embedded demo warehouse (JupyterLab, tour notebook)
#   make test  - everything: lint, types, layers, unit, Spark, notebook and browser tests
#   make book  - every notebook executed and rendered to static HTML in build/book (open index.html)

VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.icebook-installed
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: lab test book env system-deps lint demo-warehouse clean-cache labextension widgets test-spark35

VENV_DIR = $(abspath $(VENV))
# The front end is built by npm scripts (package.json), the same ones `python -m build` runs through its build
# hook; here each is run again only when its sources or lock files change.
# The lake browser's JupyterLab extension, built in labextension/ with jlpm (JupyterLab's yarn) and
# @jupyterlab/builder from npm, against the venv's JupyterLab.
LAB_EXT := labextension/dist/package.json
LAB_SOURCES := labextension/package.json labextension/yarn.lock labextension/tsconfig.json labextension/install.json \
	$(wildcard labextension/src/*.ts labextension/style/*)
# The widgets' ES modules (widgets/*.js, dom.js imported by the others) bundled by esbuild into the package.
WIDGET_SOURCES := $(wildcard widgets/*.js)
WIDGET_BUNDLES := $(patsubst widgets/%,icebook/widgets/static/%,$(filter-out widgets/dom.js,$(WIDGET_SOURCES)))

# Azurite (Azure Blob emulator) for the Azure tests, from npm into the virtualenv's node/ folder.
AZURITE := azurite@3.35.0

$(STAMP): pyproject.toml Makefile icebook/engines/spark_jars.py $(LAB_EXT) jupyter-config/server-config/icebook.json
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@# The front end is built above (make knows when it is stale): the build hook skips its npm step.
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(PY) -m pip install -q -e '.[dev]'
	@# The editable install copies the wheel's data files (the extension and the server extension's config)
	@# into the venv; the extension's copy becomes a link, so a rebuild shows without a reinstall.
	rm -rf $(VENV)/share/jupyter/labextensions/icebook-lake-browser
	ln -s $(CURDIR)/labextension/dist $(VENV)/share/jupyter/labextensions/icebook-lake-browser
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
	PATH="$(VENV_DIR)/bin:$$PATH" nice npm run build:labextension

labextension: $(LAB_EXT)

$(WIDGET_BUNDLES) &: $(WIDGET_SOURCES) package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || scripts/install-system-deps.sh
	npm install --no-audit --no-fund --silent
	nice npm run build:widgets

widgets: $(WIDGET_BUNDLES)

env: $(STAMP) $(WIDGET_BUNDLES)

system-deps:
	@scripts/install-system-deps.sh

demo-warehouse: env system-deps
	$(PY) -m icebook.scenarios.warehouse demo

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

# The Spark engine's tests on Spark 3.5 with Iceberg's 3.5 runtime (CI's second leg). pyspark 3.5 goes
# beside the venv, not into it, and first on PYTHONPATH: it and its py4j shadow 4.1's. Its own
# ICEBOOK_HOME: the scenario warehouse is built by the Spark that reads it.
SPARK35 := 3.5.9
SPARK35_DIR := $(VENV)/spark35
SPARK35_HOME ?= $${ICEBOOK_HOME:-$$HOME/.cache/icebook}/spark-$(SPARK35)
SPARK35_TESTS ?= tests/engines/test_spark.py tests/maintenance/test_previews_spark.py tests/io/test_spark_s3.py \
	tests/engines/test_spark_offline.py tests/engines/test_spark_jars.py
SPARK35_ENV = PYTHONPATH=$(abspath $(SPARK35_DIR)) ICEBOOK_HOME="$(SPARK35_HOME)" ICEBOOK_TEST_PYSPARK=$(SPARK35)

$(SPARK35_DIR)/.pyspark-$(SPARK35):
	rm -rf $(SPARK35_DIR)
	$(PY) -m pip install -q --target $(SPARK35_DIR) pyspark==$(SPARK35)
	@touch $@

test-spark35: system-deps env $(SPARK35_DIR)/.pyspark-$(SPARK35)
	$(SPARK35_ENV) $(PY) -m icebook.engines.spark_jars
	$(SPARK35_ENV) $(VENV)/bin/pytest $(SPARK35_TESTS)

clean-cache:
	rm -rf "$${ICEBOOK_HOME:-$$HOME/.cache/icebook}"
