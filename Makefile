# agentmsg: `make help` lists the targets. Everything bootstraps itself:
# .venv from pyproject.toml, node_modules from package-lock.json, and
# proto/buf/validate/validate.proto from protovalidate's PyPI sdist, and
# proto/google/rpc/*.proto (the error-detail protos) from googleapis-common-protos' sdist.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BUF    := node_modules/.bin/buf
VALIDATE_PROTO := proto/buf/validate/validate.proto
RPC_PROTOS := proto/google/rpc/status.proto
# The contract's last release: `make breaking` compares with this tag, or with proto/BASELINE's commit without it.
RELEASE_TAG := v0.1.0

.DEFAULT_GOAL := help
.PHONY: help deps browser viewer run run-viewer run-cluster run-mcp run-ts serve demo test pytest lint format typecheck generate check-generated breaking docs check-docs schema check-schema bench clean ts-build ts-bundle ts-lint ts-test coverage dist version

help: ## List the targets with one line each
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# `npm install` (not `npm ci`): the lock pins every package the registry has, but buf's
# darwin/win32 binaries are missing from it, and `npm ci` refuses a lock without them.
# sdk/typescript is a workspace of the root package: one lock file pins the SDK's packages too.
node_modules/.installed: package.json package-lock.json sdk/typescript/package.json
	npm install --no-audit --no-fund
	touch $@

$(VALIDATE_PROTO): scripts/fetch_validate_proto.py
	$(PYTHON) scripts/fetch_validate_proto.py
	touch $@

$(RPC_PROTOS): scripts/fetch_rpc_protos.py
	$(PYTHON) scripts/fetch_rpc_protos.py
	touch $@

deps: $(VENV)/.installed node_modules/.installed $(VALIDATE_PROTO) $(RPC_PROTOS) ## Install Python and Node tooling, fetch validate.proto and the google/rpc protos
	@echo "ready: run 'source .venv/bin/activate' (or put .venv/bin first on PATH) for the agentmsg command the README uses"

# The browser tests drive Debian's Chromium with Playwright (the dev extra's `playwright`, never its browser
# download). As root, a missing /usr/bin/chromium is installed from Debian's packages (waiting for another apt's lock);
# otherwise this says how, and the browser tests skip (under CI they fail: tests/gates.py).
CHROMIUM := /usr/bin/chromium
browser: ## Install Debian's chromium for the browser tests when it is missing (as root; apt-get)
	@if [ -x $(CHROMIUM) ]; then echo "chromium: $(CHROMIUM)"; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get -o DPkg::Lock::Timeout=600 update && \
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends chromium; \
	else echo "chromium is missing and this is not root: apt-get install chromium, or the browser tests skip"; fi

run: $(VENV)/.installed ## The main job: a server on embedded SQLite with an engine, a tool runner and a tail observer
	$(PY) -m agentmsg.service.demo

run-viewer: $(VENV)/.installed viewer ## The `make run` demo, then its server kept up (Ctrl-C stops) to look at the session in the viewer it prints
	$(PY) -m agentmsg.service.demo viewer

run-cluster: $(VENV)/.installed ## The same demo on 3 server nodes over a throwaway local PostgreSQL (tool calls and live events cross nodes)
	$(PY) -m agentmsg.service.demo cluster

run-mcp: $(VENV)/.installed node_modules/.installed ## The demo engine calling the MCP reference server's tools (server-everything over stdio) through agentmsg mcp runner
	$(PY) -m agentmsg.mcp.demo

run-ts: $(VENV)/.installed ts-build ## The demo with the tool runner in TypeScript (@agentmsg/sdk): a Python server and engine, a Node runner and observer
	AGENTMSG_PYTHON=$(PY) node sdk/typescript/dist/examples/demo.js

serve: $(VENV)/.installed ## Run the server alone (SQLite agentmsg.db, 127.0.0.1:50051)
	$(PY) -m agentmsg serve

demo: $(VENV)/.installed ## The contract demo: every content kind and role, validated, round-tripped, sized
	$(PY) -m agentmsg demo

generate: deps ## Regenerate src/agentmsg/v1 (and src/buf) with the pinned grpcio-tools, and sdk/typescript/src/gen with protoc-gen-es
	$(PY) scripts/generate.py

check-generated: generate ## Fail when the checked-in generated code differs from a fresh generation
	@git status --porcelain -- src/agentmsg/v1 src/buf sdk/typescript/src/gen | grep . && { echo "generated code is stale: run make generate and commit"; git diff --stat -- src/agentmsg/v1 src/buf sdk/typescript/src/gen; exit 1; } || echo "generated code is current"

breaking: deps ## buf breaking (FILE rules) against the last release: its tag, else the commit in proto/BASELINE
	$(PY) scripts/breaking.py --tag $(RELEASE_TAG)

# The site is MkDocs (mkdocs.yml) with the API reference from the docstrings (mkdocstrings, griffe), built offline in
# strict mode: any warning fails it, and so does an internal link or #anchor that names nothing (its `validation:`).
# tests/test_docs_site.py builds it the same way. Never --quiet: it hides the warnings from strict mode's count.
docs: $(VENV)/.installed $(VALIDATE_PROTO) ## Render the proto comments to docs/proto.md, then build the documentation site into site/ (strict: a warning or a broken link fails it); open site/index.html
	$(PY) scripts/proto_docs.py
	$(PY) -m mkdocs build --strict --site-dir site
	@echo "site/index.html: open it in a browser, or serve it with $(PY) -m http.server --bind 127.0.0.1 -d site"

check-docs: $(VENV)/.installed $(VALIDATE_PROTO) ## Fail when docs/proto.md differs from what the protos give
	$(PY) scripts/proto_docs.py --check

schema: $(VENV)/.installed ## Write the contract's JSON Schema (draft 2020-12, ProtoJSON form) to schema/agentmsg.v1.schema.json
	$(PY) scripts/json_schema.py

check-schema: $(VENV)/.installed ## Fail when schema/agentmsg.v1.schema.json differs from what the protos give
	$(PY) scripts/json_schema.py --check

lint: deps ## buf lint + buf format check + ruff lint + ruff format check
	$(BUF) lint
	$(BUF) format -d --exit-code --path proto/agentmsg
	$(VENV)/bin/ruff check src tests bench scripts
	$(VENV)/bin/ruff format --check src tests bench scripts

format: deps ## Apply buf format and ruff format
	$(BUF) format -w --path proto/agentmsg
	$(VENV)/bin/ruff format src tests bench scripts
	$(VENV)/bin/ruff check --fix src tests bench scripts

# Subprocesses (servers, CLIs, cluster nodes) are measured too: coverage's `patch = ["subprocess"]` (pyproject.toml).
COVERAGE_TESTS ?=
coverage: deps ts-build dist ## The pytest suite under coverage, subprocess servers too; reports src/agentmsg/service/ with missing lines (COVERAGE_TESTS=paths for a part)
	rm -rf .coverage-data && mkdir -p .coverage-data
	$(PY) -m coverage run -m pytest -q -p no:cacheprovider $(COVERAGE_TESTS)
	$(PY) -m coverage combine -q
	$(PY) -m coverage report --include='src/agentmsg/service/*' --show-missing --skip-covered

typecheck: deps ## mypy --strict on src/ (generated code excluded)
	$(VENV)/bin/mypy

pytest: deps ts-build ts-bundle viewer browser dist ## Only the pytest suite (the cross-language tests run the built TypeScript SDK; the browser tests its web bundle in chromium; tests/test_dist.py installs dist/)
	$(PY) -m pytest -q

ts-build: deps ## Compile @agentmsg/sdk (sdk/typescript, strict TypeScript) into sdk/typescript/dist
	npm run --silent build -w @agentmsg/sdk

ts-bundle: ts-build ## Bundle the SDK's browser entry (@agentmsg/sdk/web) with esbuild for platform=browser into sdk/typescript/dist/browser; fails on any Node built-in import
	npm run --silent bundle -w @agentmsg/sdk

viewer: deps ## Bundle the session viewer (sdk/typescript/viewer, on @agentmsg/sdk/web) into src/agentmsg/service/http/static, served by `agentmsg serve --http` at /
	npm run --silent viewer -w @agentmsg/sdk

# The release artifacts, versioned from pyproject.toml alone: the wheel and sdist by `python -m build` (this venv's
# setuptools, no isolated download), the npm tarball by `npm pack` of the built SDK (its browser bundle included).
dist: $(VENV)/.installed ts-bundle viewer ## Build dist/: the Python sdist and wheel, and the @agentmsg/sdk npm tarball (tests/test_dist.py installs them outside the repository)
	$(PY) scripts/version.py --check
	rm -rf dist build
	$(PY) -m build --quiet --no-isolation --outdir dist .
	npm pack --silent -w @agentmsg/sdk --pack-destination dist
	@ls -l dist

version: ## Stamp pyproject.toml's version (the one source) into sdk/typescript/package.json and package-lock.json
	$(PYTHON) scripts/version.py --stamp

# The SDK's `npm run lint` with its `tsc -p tsconfig.json --noEmit` left to ts-build: that compile type-checks the same
# program with the same options (and fails on the same errors), so `make test` checks it once, not twice.
ts-lint: deps ts-build ## Biome (lint + format check) and tsc --noEmit on sdk/typescript
	npm exec --silent -w @agentmsg/sdk -- biome check
	npm exec --silent -w @agentmsg/sdk -- tsc -p tsconfig.web.json --noEmit
	npm exec --silent -w @agentmsg/sdk -- tsc -p viewer/tsconfig.json

ts-test: ts-build ## The SDK's own tests with node --test (golden and fold vectors, helpers, dict form)
	npm run --silent test -w @agentmsg/sdk

test: deps lint ts-lint breaking check-generated check-docs check-schema typecheck ts-test pytest ## Everything CI runs: lint, breaking, generated-code, docs and schema drift, types, TypeScript and Python tests

# The peer libraries the codec benchmark compares with (pydantic-ai, LangChain): benchmark-only.
$(VENV)/.bench-installed: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $@

BENCH_OUT := bench/.results
# BENCH_ARGS=--quick for a short smoke run (the results file then says QUICK)
bench: deps ts-build viewer $(VENV)/.bench-installed ## Benchmarks vs raw protobuf, JSON, pydantic-ai, LangChain, a2a-sdk, bare gRPC, TCP, Connect vs gRPC, bare psycopg, tracing off; the TypeScript SDK vs Python; the delay heavy requests cause; group commit vs a bare group-committing server; Connect vs A2A HTTP+JSON; a durable round trip vs A2A gRPC; the viewer in Chromium (first paint of 10k messages, the demo live): writes bench/results.md (never part of test)
	@mkdir -p $(BENCH_OUT)
	$(PY) bench/run.py --json $(BENCH_OUT)/codec.json $(BENCH_ARGS)
	$(PY) bench/conversion.py --json $(BENCH_OUT)/conversion.json $(BENCH_ARGS)
	$(PY) bench/frameworks.py --json $(BENCH_OUT)/frameworks.json $(BENCH_ARGS)
	$(PY) bench/streaming.py --json $(BENCH_OUT)/streaming.json $(BENCH_ARGS)
	$(PY) bench/service.py --json $(BENCH_OUT)/service.json $(BENCH_ARGS)
	$(PY) bench/connect_http.py --json $(BENCH_OUT)/http.json $(BENCH_ARGS)
	$(PY) bench/reads.py --json $(BENCH_OUT)/reads.json $(BENCH_ARGS)
	$(PY) bench/cluster.py --json $(BENCH_OUT)/cluster.json $(BENCH_ARGS)
	$(PY) bench/observability.py --json $(BENCH_OUT)/observability.json $(BENCH_ARGS)
	$(PY) bench/mcp_bridge.py --json $(BENCH_OUT)/mcp.json $(BENCH_ARGS)
	$(PY) bench/a2a_conversion.py --json $(BENCH_OUT)/a2a.json $(BENCH_ARGS)
	$(PY) bench/typescript.py --json $(BENCH_OUT)/typescript.json $(BENCH_ARGS)
	$(PY) bench/hostile.py --loop --json $(BENCH_OUT)/hostile.json $(BENCH_ARGS)
	$(PY) bench/refusals.py --json $(BENCH_OUT)/refusals.json $(BENCH_ARGS)
	$(PY) bench/group_commit.py --json $(BENCH_OUT)/group_commit.json $(BENCH_ARGS)
	$(PY) bench/roundtrip_a2a.py --json $(BENCH_OUT)/roundtrip.json $(BENCH_ARGS)
	$(PY) bench/viewer.py --json $(BENCH_OUT)/viewer.json $(BENCH_ARGS)
	$(PY) bench/report.py $(BENCH_OUT) -o bench/results.md --command "make bench$(if $(BENCH_ARGS), BENCH_ARGS=$(BENCH_ARGS))"

.PHONY: fuzz soak
FUZZ_SECONDS ?= 60
# atheris (coverage-guided) over every decoder; the corpus grows in .cache/fuzz-corpus, crashes land in .cache/fuzz-crashes
$(VENV)/.fuzz-installed: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[fuzz]'
	touch $@

fuzz: $(VENV)/.fuzz-installed ## Fuzz every decoder with atheris for FUZZ_SECONDS (default 60; never part of test)
	@mkdir -p .cache/fuzz-corpus .cache/fuzz-crashes
	$(PY) fuzz/fuzz_decoders.py -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
		-artifact_prefix=.cache/fuzz-crashes/ .cache/fuzz-corpus

soak: deps ## The reliability tests' long variants (AGENTMSG_SOAK=1: 10x examples, messages, sizes; RPC fuzzing, 400 requests a method; the reply cache at its cap over 150,000 replies; minutes)
	AGENTMSG_SOAK=1 $(PY) -m pytest -q tests/test_fuzz_decoders.py tests/test_input_limits.py \
		tests/service/test_faults.py tests/service/test_load.py \
		tests/service/test_fuzz_rpcs.py tests/service/test_reply_cache_soak.py

clean: ## Remove the venv, node_modules, dist/, site/ and caches
	rm -rf $(VENV) node_modules dist build site .cache .pytest_cache .mypy_cache .ruff_cache $(VALIDATE_PROTO) proto/google
