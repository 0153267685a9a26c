# The Makefile is the interface: every target sets up what it needs on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LAMBDA_VENV := .build/lambda-python

HOST ?= 127.0.0.1
PORT ?= 8000

# make test runs pytest in this many processes (pytest-xdist, whole files to a worker so a module's
# shared fixture is made once). The suite waits more than it
# computes (servers, a browser, an OpenSearch node), so three share two cores well; 0 runs serially.
TEST_WORKERS ?= 3

.PHONY: dev test test-lambda-python smoke lint format bench bench-concurrency bench-scale bench-cold-start bench-learning bench-retention bench-locomo bench-ingest openapi load clean install test-opensearch opensearch-up opensearch-down synth deploy layer-lock

# Two installs into the one .venv: `make dev` installs what serving needs (the service and the
# embedded default's model: the `local` extra) and no more; every other target installs everything
# the tests, lint, benchmarks and the CDK need, which covers serving too.
SERVE_STAMP := $(VENV)/.installed-serve
ALL_EXTRAS  := server,dev,local,cdk,mcp,langgraph,openai-agents,llamaindex,strands

# uv installs (pip's resolver and wheels, in parallel): a clean clone's whole environment in about
# 30 s where pip took about 4 min on these machines. It is itself installed from PyPI by pip.
UV := $(VENV)/bin/uv
INSTALL = $(UV) pip install --quiet --python $(PY)

$(UV):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check uv

$(SERVE_STAMP): pyproject.toml | $(UV)
	$(INSTALL) -e '.[local]'
	@touch $(SERVE_STAMP)

$(STAMP): pyproject.toml | $(UV)
	$(INSTALL) -e '.[$(ALL_EXTRAS)]'
	@touch $(STAMP) $(SERVE_STAMP)

install: $(STAMP)

## dev: set up what serving needs and serve the API on $(HOST):$(PORT) with the embedded default (prints a dev key)
dev: $(SERVE_STAMP)
	$(VENV)/bin/agent-memory serve --host $(HOST) --port $(PORT)

## test: set up and run the whole suite, the cluster tests on a local OpenSearch node started and stopped for it
# tests/deployed runs once: on Python 3.12 with the layer's packages where that environment could
# be made (test-lambda-python), in the development environment otherwise.
# The Python 3.12 run computes while the main run mostly waits (on servers, a browser, the node),
# so the two run side by side; its output is printed when both are done, and either failing fails.
test: $(STAMP) $(LAMBDA_VENV)/.installed
	$(VENV)/bin/ruff check .
	@mkdir -p .build; \
	$(MAKE) --no-print-directory test-lambda-python > .build/test-lambda-python.log 2>&1 & deployed=$$!; \
	$(OPENSEARCH) run sh -c '$(VENV)/bin/pytest -q -n $(TEST_WORKERS) --dist loadfile $$(test -f $(LAMBDA_VENV)/.installed && echo --ignore=tests/deployed) && $(E2E_ON_OPENSEARCH)'; main=$$?; \
	wait $$deployed; lambda=$$?; \
	echo "--- tests/deployed on Python 3.12 (make test-lambda-python) ---"; cat .build/test-lambda-python.log; \
	test $$main -eq 0 && test $$lambda -eq 0

# The deployed-configuration tests on Lambda's Python 3.12 with exactly the layer's locked
# packages (plus pytest and moto) and the function code: made once, again when the lock changes.
# No Python 3.12: skipped with a warning, or an error when CI=true.

$(LAMBDA_VENV)/.installed: layers/requirements.txt layers/build.py
	$(PY) layers/build.py test-venv --target $(LAMBDA_VENV)

## test-lambda-python: tests/deployed on Python 3.12 with the layer's packages only
test-lambda-python: $(STAMP) $(LAMBDA_VENV)/.installed
	@if [ -f $(LAMBDA_VENV)/.installed ]; then \
	  $(PY) -m tests.deployed.templates && \
	  AGENT_MEMORY_DEPLOYED_TEMPLATES=.build/deployed-templates PYTHONPATH=functions \
	  $(LAMBDA_VENV)/bin/python -m pytest -q -p no:cacheprovider --confcutdir=tests/deployed tests/deployed; fi

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

## bench-concurrency: search throughput of `serve` over 1, 4, 16 and 64 clients, and a mixed row
bench-concurrency: $(STAMP)
	$(PY) benchmarks/concurrency.py

## bench-scale: search at 10,000 / 100,000 / 1,000,000 memories of one agent and 1,000 agents of 1,000
bench-scale: $(STAMP)
	$(PY) benchmarks/scale.py

## bench-cold-start: handler import time with and without shipped bytecode (fresh interpreters)
bench-cold-start: $(STAMP)
	$(PY) benchmarks/cold_start.py

## bench-learning: a simulated agent runs the same task ten times; the pattern/confidence curve
bench-learning: $(STAMP)
	$(PY) benchmarks/learning_curve.py

## bench-retention: the daily cleanup over 1,000,000 records of 100 agents on the local store
bench-retention: $(STAMP)
	$(PY) benchmarks/retention.py

## bench-knowledge-update: the current fact first on hand-written knowledge updates (halves A-I tuned on; J held out: knowledge_update.py --halves J)
bench-knowledge-update: $(STAMP)
	$(PY) benchmarks/knowledge_update.py

## bench-locomo: retrieval quality on LoCoMo through the local HTTP API (LOCOMO=path/to/locomo10.json)
bench-locomo: $(STAMP)
	$(PY) benchmarks/locomo.py $(if $(LOCOMO),--data $(LOCOMO))

## train-embedder: fine-tune MiniLM for memory search on the CPU, in its own environment (about 5 GB:
## PyPI's torch brings its CUDA libraries; TORCH_INDEX=<a CPU wheel index> avoids them where reachable);
## TRAIN_SOURCES=owned trains on the project's own data only, so the weights may ship (training/README.md)
.PHONY: train-embedder
TRAIN_VENV := .build/train-venv
TORCH_INDEX ?=
TRAIN_SOURCES ?=

$(TRAIN_VENV)/.installed: pyproject.toml
	@test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(if $(TORCH_INDEX),$(TRAIN_VENV)/bin/pip install --quiet torch --index-url $(TORCH_INDEX))
	$(TRAIN_VENV)/bin/pip install --quiet -e '.[train]'
	@touch $@

## train-update-judge: the update judge of supersession by meaning (training/README.md, "The update judge")
.PHONY: train-update-judge
train-update-judge: $(TRAIN_VENV)/.installed
	nice -n 10 $(TRAIN_VENV)/bin/python training/train_update_judge.py --train A,B,C,D,E,F,G --test H,I,J --export

## train-answer-judge: the answer judge a search may ask (training/README.md, "The answer judge")
.PHONY: train-answer-judge
train-answer-judge: $(TRAIN_VENV)/.installed
	nice -n 10 $(TRAIN_VENV)/bin/python training/train_answer_judge.py --train A,B,C,D,E,F,G,H,I,J --test K --export

train-embedder: $(TRAIN_VENV)/.installed
	nice -n 10 $(TRAIN_VENV)/bin/python training/build_pairs.py $(if $(LOCOMO),--locomo $(LOCOMO)) $(if $(TRAIN_SOURCES),--sources $(TRAIN_SOURCES))
	nice -n 10 $(TRAIN_VENV)/bin/python training/train_embedder.py $(if $(LOCOMO),--locomo $(LOCOMO)) $(if $(TRAIN_SOURCES),--sources $(TRAIN_SOURCES))

## bench-ingest: LoCoMo's turns imported through the HTTP API against the raw embedder's rate, and search p95 meanwhile
bench-ingest: $(STAMP)
	$(PY) benchmarks/ingest.py $(if $(LOCOMO),--data $(LOCOMO))

## load: 60 s of writes and searches by 50 clients across 50 agents (locust), then the ledger
load: $(STAMP)
	$(INSTALL) -e '.[bench]'
	$(PY) benchmarks/load.py

## openapi: regenerate docs/openapi.json from the routes (a test fails while it is out of date)
openapi: $(STAMP)
	$(PY) -c "from agent_memory.handlers.api import openapi_json; print(openapi_json(), end='')" > docs/openapi.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache

# --- OpenSearch: a single local node, OpenSearch 2.19.1 with k-NN from Maven Central -------------
# (scripts/opensearch.sh: needs Java 11+ and Maven; artifacts cached in ~/.cache/agent-memory)
OPENSEARCH := scripts/opensearch.sh
# The local runtime's e2e tests run a second time with the OpenSearch store behind the API: six
# files, every test of them (docs/opensearch.md, "The test node").
E2E_OPENSEARCH_TESTS := tests/e2e/test_local_http.py tests/e2e/test_forget_http.py \
	tests/e2e/test_keeping_and_forgetting_http.py tests/e2e/test_supersession_http.py \
	tests/e2e/test_knowledge_e2e.py tests/e2e/test_isolation.py
E2E_ON_OPENSEARCH = AGENT_MEMORY_TEST_STORE=opensearch $(VENV)/bin/pytest -q $(E2E_OPENSEARCH_TESTS)

## opensearch-up: start a local OpenSearch node with k-NN (or reuse it); prints OPENSEARCH_URL=...
opensearch-up:
	@$(OPENSEARCH) up

## opensearch-down: stop the local OpenSearch node and delete its data
opensearch-down:
	@$(OPENSEARCH) down

## test-opensearch: every test that needs a cluster (OPENSEARCH_URL, or a node started and stopped for it)
test-opensearch: $(STAMP)
	$(OPENSEARCH) run sh -c '$(VENV)/bin/pytest -q -m opensearch && $(E2E_ON_OPENSEARCH)'

# --- AWS (CDK) -------------------------------------------------------------------------------
# The CDK CLI comes from npm, pinned, and runs on Node 22 installed from npm into .build/node:
# jsii and the CLI no longer support the Node 20 many machines still have (docs/infrastructure.md).
CDK_CLI   ?= aws-cdk@2.1148.0
NODE_PKG  ?= node@22.23.3
NODE_DIR  := .build/node
NODE_BIN  := $(abspath $(NODE_DIR)/node_modules/.bin)
CDK       := cd cdk && PATH="$(NODE_BIN):$$PATH" npx --yes $(CDK_CLI)
CDK_APP   := --app "$(abspath $(PY)) app.py"

$(NODE_DIR)/.installed:
	npm install --silent --no-audit --no-fund --prefix $(NODE_DIR) $(NODE_PKG)
	@touch $@

## synth: build the dependency layer (pip, no Docker) and synthesize the stack into cdk/cdk.out
synth: $(STAMP) $(NODE_DIR)/.installed
	$(CDK) synth $(CDK_APP) --quiet --no-notices $(CDK_ARGS)

## deploy: synth and deploy to the account and region of your AWS credentials (CDK_ARGS="-c stage=prod")
deploy: $(STAMP) $(NODE_DIR)/.installed
	$(CDK) deploy $(CDK_APP) --require-approval broadening --no-notices $(CDK_ARGS)

## smoke: check a deployment end to end (STACK=agent-memory-dev, or URL=...; KEY=an admin API key)
smoke: $(STAMP)
	$(PY) -m agent_memory.local.smoke $(if $(STACK),--stack $(STACK)) $(if $(URL),--url $(URL)) $(if $(KEY),--key $(KEY))

## layer-lock: re-lock layers/requirements.txt after changing [project.dependencies]
layer-lock: $(STAMP)
	$(PY) layers/build.py lock
