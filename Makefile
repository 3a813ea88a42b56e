# The two commands of the README: `make demo` (install, ingest the sample corpus, search)
# and `make test` (install with the test tools, then the whole test suite, Elasticsearch included).
# The demo installs only what ingest needs at run time; the test extras come with `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-cluster install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-runtime: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $@

install: $(VENV)/.installed-runtime

demo: install
	$(BIN)/ingest run corpus
	$(BIN)/ingest search "warranty period months" --top 3

test: $(VENV)/.installed-test
	bash scripts/run-tests

# Opt-in: a real 3-node cluster on loopback that loses a data node (SIGKILL) mid-run (~4 min).
test-cluster: $(VENV)/.installed-test
	bash scripts/run-cluster-tests

clean:
	rm -rf $(VENV) .ingest .pytest_cache .hypothesis build dist
