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
	@echo '$(UV) run baton dev $(DEV_ARGS)'; trap 'true' INT; $(UV) run baton dev $(DEV_ARGS); status=$$?; exit $$status

test: bootstrap lint  ## everything CI runs: lint, types, ASL rule, all test levels
	$(UV) run pytest -n auto --dist loadfile  # one worker per core, whole files per worker; each worker starts its own local stack
	$(UV) run python scripts/bench.py --quick  # the bench's summary table with small n, so it never rots (prints, asserts nothing)

inbox:  ## build the web inbox (inbox/ -> inbox/dist/, served by `baton dev` at /inbox/)
	cd inbox && npm ci --no-audit --no-fund && npm run build

lint: bootstrap
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run mypy
	$(UV) run baton check-asl statemachines

unit: bootstrap
	$(UV) run pytest tests/unit

bench: bootstrap  ## prints the figures, ending with one summary table measured in one run (scripts/bench.py)
	$(UV) run python scripts/bench_questions.py
	$(UV) run python scripts/bench_mcp.py
	$(UV) run python scripts/bench.py  # cold imports, CLI, baton dev, critical path (n=50), load at 1,000 pending and 10x history, then the summary

synth: bootstrap  ## CDK synth offline (no Docker, no credentials)
	$(UV) run baton synth

fuzz: bootstrap  ## Schemathesis against the local stack: every phase, every check, thousands of requests
	FUZZ_MAX_EXAMPLES=$${FUZZ_MAX_EXAMPLES:-300} $(UV) run python scripts/fuzz.py
