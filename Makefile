# agentmsg: `make help` lists the targets. Everything bootstraps itself:
# .venv from pyproject.toml, node_modules from package-lock.json, and
# proto/buf/validate/validate.proto from protovalidate's PyPI sdist.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BUF    := node_modules/.bin/buf
VALIDATE_PROTO := proto/buf/validate/validate.proto

.DEFAULT_GOAL := help
.PHONY: help deps run serve demo test pytest lint format typecheck generate check-generated bench clean

help: ## List the targets with one line each
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# `npm install` (not `npm ci`): the lock pins every package the registry has, but buf's
# darwin/win32 binaries are missing from it, and `npm ci` refuses a lock without them.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund
	touch $@

$(VALIDATE_PROTO): scripts/fetch_validate_proto.py
	$(PYTHON) scripts/fetch_validate_proto.py
	touch $@

deps: $(VENV)/.installed node_modules/.installed $(VALIDATE_PROTO) ## Install Python and Node tooling, fetch validate.proto

run: $(VENV)/.installed ## The main job: a server on embedded SQLite with an engine, a tool runner and a tail observer
	$(PY) -m agentmsg.service.demo

serve: $(VENV)/.installed ## Run the server alone (SQLite agentmsg.db, 127.0.0.1:50051)
	$(PY) -m agentmsg serve

demo: $(VENV)/.installed ## The contract demo: every content kind and role, validated, round-tripped, sized
	$(PY) -m agentmsg demo

generate: deps ## Regenerate src/agentmsg/v1 (and src/buf) from proto/ with the pinned grpcio-tools
	$(PY) scripts/generate.py

check-generated: generate ## Fail when the checked-in generated code differs from a fresh generation
	@git status --porcelain -- src/agentmsg/v1 src/buf | grep . && { echo "generated code is stale: run make generate and commit"; git diff --stat -- src/agentmsg/v1 src/buf; exit 1; } || echo "generated code is current"

lint: deps ## buf lint + buf format check + ruff lint + ruff format check
	$(BUF) lint
	$(BUF) format -d --exit-code --path proto/agentmsg
	$(VENV)/bin/ruff check src tests bench scripts
	$(VENV)/bin/ruff format --check src tests bench scripts

format: deps ## Apply buf format and ruff format
	$(BUF) format -w --path proto/agentmsg
	$(VENV)/bin/ruff format src tests bench scripts
	$(VENV)/bin/ruff check --fix src tests bench scripts

typecheck: deps ## mypy --strict on src/ (generated code excluded)
	$(VENV)/bin/mypy

pytest: deps ## Only the pytest suite
	$(PY) -m pytest -q

test: deps lint check-generated typecheck pytest ## Everything CI runs: lint, generated-code drift, types, tests

bench: deps ## Benchmarks: codec, conversion, stream folding, service (never part of test)
	$(PY) bench/run.py
	$(PY) bench/conversion.py
	$(PY) bench/streaming.py
	$(PY) bench/service.py

clean: ## Remove the venv, node_modules and caches
	rm -rf $(VENV) node_modules .cache .pytest_cache .mypy_cache .ruff_cache $(VALIDATE_PROTO)
