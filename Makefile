# The Makefile is the interface: every target sets up what it needs on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: dev test lint format bench clean install test-opensearch

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,local]'
	@touch $(STAMP)

install: $(STAMP)

## dev: set up and serve the API on $(HOST):$(PORT) with the embedded default (prints a dev key)
dev: $(STAMP)
	$(VENV)/bin/agent-memory serve --host $(HOST) --port $(PORT)

## test: set up and run the whole suite
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest -q

## lint: ruff (lint + format check) and mypy
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## bench: search latency over 10,000 memories of one agent, write->searchable latency
bench: $(STAMP)
	$(PY) benchmarks/search_latency.py
	$(PY) benchmarks/write_to_searchable.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache

## test-opensearch: the store contract suite against a real cluster (OPENSEARCH_URL=http://localhost:9200)
test-opensearch: $(STAMP)
	@test -n "$(OPENSEARCH_URL)" || (echo "set OPENSEARCH_URL, e.g. http://localhost:9200" && exit 2)
	OPENSEARCH_URL=$(OPENSEARCH_URL) $(VENV)/bin/pytest tests/contract -m opensearch -q
