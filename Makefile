# The two commands of the README: `make demo` (install, ingest the sample corpus, search)
# and `make test` (install, then the whole test suite, Elasticsearch included).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test install clean

$(BIN)/ingest: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

install: $(BIN)/ingest

demo: install
	$(BIN)/ingest run corpus
	$(BIN)/ingest search "warranty period months" --top 3

test: install
	bash scripts/run-tests

clean:
	rm -rf $(VENV) .ingest .pytest_cache .hypothesis
