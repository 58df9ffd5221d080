# The README's commands. Each target bootstraps first, so it works on a fresh clone.
# UV is evaluated when used (after bootstrap has installed uv), hence `=` rather than `:=`.
UV = UV_PYTHON_DOWNLOADS=never $(shell python3 -m uv --version >/dev/null 2>&1 && echo python3 -m uv || (test -x .tools/bin/uv && echo .tools/bin/uv) || echo uv)
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1

.PHONY: bootstrap dev test lint unit bench synth fuzz inbox

bootstrap:
	@./scripts/bootstrap.sh

# Ctrl-C stops `baton dev`, which then exits 0 (README, "The demo, step by step"). The recipe's shell
# waits it out (trap) instead of dying of the same SIGINT, so make has no failed command to report
# ("make: *** [Makefile:..: dev] Interrupt"). DEV_ARGS passes options, e.g. DEV_ARGS='--fresh -v'.
DEV_ARGS ?=
dev: bootstrap  ## the embedded local stack with its demo
	@echo '$(UV) run --extra local baton dev $(DEV_ARGS)'; trap 'true' INT; $(UV) run --extra local baton dev $(DEV_ARGS); status=$$?; exit $$status

# `make test` (CI): the quick checks first (they fail in seconds), then mypy in the background beside the
# tests (one process, cold on a fresh clone, while the test workers spend much of their time waiting on
# their local stacks), its output printed when the tests end. The bench's quick mode (`bench/summary.py
# --quick`, small n, so it never rots) runs once, as a test among the others (tests/e2e/test_bench_quick.py
# checks its summary's shape, never its timings); its output is printed after the tests. Every step prints
# its wall and CPU time (scripts/ci_phase.sh). Test scheduling: tests/conftest.py (pytest_xdist_make_scheduler).
# The roles check runs after the tests: every AWS call a function made in them (recorded under
# BATON_CALLS_DIR, tests/call_recorder.py) against that function's deployed role (tests/roles_check.py).
PHASE = ./scripts/ci_phase.sh
test: bootstrap  ## everything CI runs: lint, types, ASL rule, all test levels
	$(PHASE) ruff env $(UV) run ruff check .
	$(PHASE) format env $(UV) run ruff format --check .
	$(PHASE) asl env $(UV) run baton check-asl statemachines
	@types_log=$$(mktemp); bench_log=$$(mktemp); py311_log=$$(mktemp); calls_dir=$$(mktemp -d); \
	$(PHASE) mypy env $(UV) run mypy >"$$types_log" 2>&1 & types=$$!; \
	$(PHASE) py311 ./scripts/check_py311.sh >"$$py311_log" 2>&1 & py311=$$!; \
	echo '$(UV) run pytest -n auto --dist loadfile  (mypy and the CLI/SDK on Python 3.11 beside it)'; \
	$(PHASE) pytest env BATON_BENCH_LOG="$$bench_log" BATON_CALLS_DIR="$$calls_dir" $(UV) run pytest -n auto --dist loadfile; tests=$$?; \
	$(PHASE) roles env $(UV) run python -m tests.roles_check "$$calls_dir"; roles=$$?; \
	wait $$types; typed=$$?; echo '--- mypy (ran beside the tests):'; cat "$$types_log"; \
	wait $$py311; old=$$?; echo '--- scripts/check_py311.sh (ran beside the tests):'; cat "$$py311_log"; \
	echo '--- bench/summary.py --quick (ran among the tests, tests/e2e/test_bench_quick.py):'; cat "$$bench_log"; \
	rm -rf "$$types_log" "$$bench_log" "$$py311_log" "$$calls_dir"; \
	test $$tests = 0 && test $$typed = 0 && test $$old = 0 && test $$roles = 0

inbox:  ## build the web inbox (inbox/ -> inbox/dist/, served by `baton dev` at /inbox/)
	cd inbox && npm ci --no-audit --no-fund && npm run build

lint: bootstrap
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run mypy
	$(UV) run baton check-asl statemachines

unit: bootstrap
	$(UV) run pytest tests/unit

# One bench per question a user asks (docs/performance.md): bench/answer_latency.py, bench/aws_costs.py,
# bench/cold_start.py, bench/local_scale.py (each `--quick`, `--only <sections>`). `make bench` runs the
# question life and the MCP door, then bench/summary.py: the figures measured side by side, one table.
bench: bootstrap  ## prints the figures, ending with one summary table measured in one run (bench/summary.py)
	$(UV) run python bench/aws_costs.py --only 'question life'
	$(UV) run python bench/answer_latency.py --only mcp
	$(UV) run python bench/summary.py  # cold imports, CLI, baton dev, critical path (n=50), load at 1,000 pending and 10x history, then the summary

synth: bootstrap  ## CDK synth offline (no Docker, no credentials)
	$(UV) run baton synth

fuzz: bootstrap  ## Schemathesis against the local stack: every phase, every check, thousands of requests
	FUZZ_MAX_EXAMPLES=$${FUZZ_MAX_EXAMPLES:-300} $(UV) run python scripts/fuzz.py
