# The two commands a fresh machine needs: `make test` and `make demo`. Everything they need is
# installed here: a virtualenv in .venv with the project and its dev extras.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: test check test-faults test-soak test-e2e lint deps typecheck demo airflow bench java-check compose-check browser-check netns-check clean

$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "Python 3.10+ is required ($(PYTHON) is $$($(PYTHON) --version 2>&1))"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# setuptools warns, at each editable install, that folders named like the package could
	@# shadow it: a UserWarning of the build, silenced here alone.
	PYTHONWARNINGS=ignore::UserWarning $(PY) -m pip install --quiet -e '.[dev,postgres,mysql,schema-registry,openlineage,iceberg]'
	touch $(INSTALLED)

# Spark (PySpark) needs Java 17 or newer.
java-check:
	@command -v java >/dev/null 2>&1 || \
		{ echo "Java 17+ is required for PySpark and was not found: install a JDK (e.g. apt-get install openjdk-17-jre-headless)"; exit 1; }
	@major=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1); \
		if [ -z "$$major" ] || [ "$$major" -lt 17 ]; then \
			echo "Java 17+ is required for PySpark; found: $$(java -version 2>&1 | head -n1)"; exit 1; fi

# $(call apt-need,COMMANDS,PACKAGES,WHAT NEEDS THEM): every command found, or (as root) Debian's
# packages installed; otherwise a message naming the packages.
apt-need = { $(foreach c,$(1),command -v $(c) >/dev/null 2>&1 &&) true; } || \
	{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { apt-get install -y -qq $(2) >/dev/null 2>&1 || \
	    { apt-get update -qq && apt-get install -y -qq $(2) >/dev/null; }; }; } || \
	{ echo "$(3): apt-get install $(2)"; exit 1; }

# Debian's docker-compose validates docker/compose.yaml offline (no Docker engine needed).
compose-check:
	@$(call apt-need,docker-compose,docker-compose,docker-compose is required to check docker/compose.yaml)

# Debian's Chromium and its driver: the Connectors page is tested in headless Chromium.
browser-check:
	@$(call apt-need,chromium chromedriver,chromium chromium-driver,Chromium is required to test the Connectors page)

# nftables drops the packets of a test host's link (tests_common/netns.py): the partition tests.
netns-check:
	@$(call apt-need,ip nft,iproute2 nftables,ip and nft are required for the network partition tests)

# lint-imports checks the layers of DESIGN.md (pyproject.toml's [tool.importlinter]): the
# Airflow side never imports the runtime, the connector API nothing else of the project, ...
lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-logo

# Every module the package imports is a declared dependency, and every dependency is used.
deps: $(INSTALLED)
	$(VENV)/bin/deptry airflow_provider_connect

# mypy: strict on the connector API and the Airflow side, checked everywhere (pyproject.toml).
typecheck: $(INSTALLED)
	$(VENV)/bin/mypy

test: $(INSTALLED) java-check compose-check browser-check netns-check lint deps typecheck
	$(PY) -m pytest -n 2 --dist loadfile --durations=25

# The inner loop, in under two minutes: the static checks of `make test` and the unit tests,
# which need no service (no broker, Spark, database server, Docker engine or browser); only
# docker-compose, which tests/unit/project/test_docker.py validates the compose file with,
# offline.
check: $(INSTALLED) compose-check lint deps typecheck
	$(PY) -m pytest tests/unit -q

# The long variants (marker faults): more kills, more data, the kills under the other guarantee
# (tests/integration/runtime/test_faults.py, tests/integration/connectors/{postgres,mysql}/test_pipeline.py)
# and the benchmarks whose quick run takes a minute or more (tests/integration/project/test_bench_smoke.py).
test-faults: $(INSTALLED) java-check netns-check
	$(PY) -m pytest --faults -m faults -s

# The soak (tests/soak): an hour under load, a fault every 5 minutes, then every record counted
# and the runtime's memory, files and threads compared; its table, plot and figures go to
# SOAK_OUT. `make test-soak SOAK_MINUTES=20` for a shorter one.
SOAK_MINUTES ?= 60
SOAK_OUT ?= soak-results
test-soak: $(INSTALLED) java-check netns-check
	SOAK_MINUTES=$(SOAK_MINUTES) SOAK_OUT=$(SOAK_OUT) $(PY) -m pytest --soak -m soak -s \
		--timeout=$$(( $(SOAK_MINUTES) * 60 + 1800 )) tests/soak

# The production stack end to end (tests/e2e): Airflow's services, a Spark standalone
# cluster, PostgreSQL, the runtime deployed by its DAG, pipelines through kills.
test-e2e: $(INSTALLED) java-check
	$(PY) -m pytest --e2e -m e2e -s

demo: $(INSTALLED) java-check
	$(PY) -m demo

# Airflow's UI with the provider and the example DAGs, a runtime and a broker, on loopback
# (demo/airflow.py); Ctrl-C stops it. ARGS="--api-port 8090" moves it off a taken port.
airflow: $(INSTALLED) java-check
	$(PY) -m demo.airflow $(ARGS)

# Quix Streams, a peer of the benchmarks, pins confluent-kafka and pydantic below Airflow's:
# it gets a virtualenv of its own.
QUIX_VENV := bench/.quix-venv
$(QUIX_VENV)/.installed: Makefile
	test -x $(QUIX_VENV)/bin/python || $(PYTHON) -m venv $(QUIX_VENV)
	$(QUIX_VENV)/bin/pip install --quiet 'quixstreams[postgresql,s3,parquet]==3.28.1'
	touch $@

bench: $(INSTALLED) java-check $(QUIX_VENV)/.installed
	$(PY) -m bench.run

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .import_linter_cache .hypothesis
