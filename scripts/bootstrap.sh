#!/usr/bin/env bash
# Set up everything Baton needs on a fresh machine that has Python 3.13 (and 3.11), git and Node:
# uv (from PyPI), then the locked environment in .venv. Safe to run again; it only fills gaps.
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON_DOWNLOADS=never  # use this machine's Python; uv cannot fetch interpreters here
# uv gives up on a file it cannot compile within 60 s; on a loaded machine aws_cdk's largest modules take
# longer than that, and the whole sync fails. A longer bound, still finite.
export UV_COMPILE_BYTECODE_TIMEOUT="${UV_COMPILE_BYTECODE_TIMEOUT:-600}"

uv_cmd() {
  if python3 -m uv --version >/dev/null 2>&1; then
    python3 -m uv "$@"
  elif [ -x .tools/bin/uv ]; then
    .tools/bin/uv "$@"
  elif command -v uv >/dev/null 2>&1; then
    uv "$@"
  else
    return 127
  fi
}

if ! uv_cmd --version >/dev/null 2>&1; then
  echo "bootstrap: installing uv from PyPI" >&2
  # The user's pip first; where the system Python is externally managed (PEP 668) or has no pip,
  # a private venv in .tools/ holds uv instead.
  python3 -m pip install --quiet --disable-pip-version-check uv 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --user uv 2>/dev/null \
    || { python3 -m venv .tools && .tools/bin/pip install --quiet --disable-pip-version-check uv; }
fi
# The web inbox (inbox/ -> inbox/dist/, served by `baton dev` at /inbox/): built when dist is missing or
# older than any of its sources, so a fresh clone's `make dev` and `make test` have it. It needs nothing
# from Python, so it builds in the background while uv fills .venv (mostly waiting on the npm registry
# and the disk while uv compiles); the script waits for it below and fails if it failed.
inbox_build=
if [ -f inbox/package.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -f inbox/dist/index.html ] \
    || [ -n "$(find inbox/src inbox/public inbox/index.html inbox/package.json inbox/package-lock.json \
      inbox/vite.config.js -newer inbox/dist/index.html -print -quit)" ]; then
    echo "bootstrap: building the web inbox (inbox/dist)" >&2
    (cd inbox && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent >/dev/null) &
    inbox_build=$!
  fi
fi
# The ASL validator the infra tests run over the deployed definitions (tests/infra/test_asl_validator.py):
# the npm asl-validator pinned in tools/asl/package-lock.json, installed when missing or older than its lock.
asl_tools=
if [ -f tools/asl/package-lock.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -f tools/asl/node_modules/.package-lock.json ] \
    || [ tools/asl/package-lock.json -nt tools/asl/node_modules/.package-lock.json ]; then
    echo "bootstrap: installing the ASL validator (tools/asl)" >&2
    (cd tools/asl && npm ci --no-audit --no-fund --loglevel=error) &
    asl_tools=$!
  fi
fi

# Bytecode compiled once here: the environment sets PYTHONDONTWRITEBYTECODE, so nothing would write it
# at import and every start (the CLI, `baton dev`, each test worker) would compile from source again.
# `--compile-bytecode` compiles site-packages (only what changed, after the first time); compileall
# does the checkout's own code (it skips what is up to date).
# .venv runs the Lambda runtime's Python (infra/assets.py RUNTIME_PYTHON), so the tests run what deploys.
# Found by scripts/find_python.sh (not a .python-version file: it would turn this checkout's python3, and
# its uv, into 3.13's).
runtime_python=$(./scripts/find_python.sh 3.13 "${BATON_RUNTIME_PYTHON:-}" || true)
if [ -z "$runtime_python" ]; then
  echo "bootstrap: Python 3.13 (the Lambda runtime's) is needed: install it or set BATON_RUNTIME_PYTHON" >&2
  exit 1
fi
# --extra local: moto, for the local stack and the tests (pyproject.toml; the SDK and the CLI do without it).
uv_cmd sync --frozen --quiet --compile-bytecode --extra local --python "$runtime_python"
.venv/bin/python -m compileall -q -j 0 layers/baton/python functions infra >/dev/null
# The runtime layer (uv.lock's Powertools, pydantic and their dependencies as PyPI's arm64 wheels) and its
# twin for this machine, which the import check imports: built once per lock change (infra/runtime_layer.py).
.venv/bin/python -m infra.runtime_layer build >/dev/null
# checkov (tests/synth/test_checkov.py) in its own environment, from its pinned, hashed requirements: its own
# pins conflict with uv.lock. Installed again only when infra/checkov/requirements.txt changes.
if [ ! -x .tools/checkov/bin/checkov ] || [ infra/checkov/requirements.txt -nt .tools/checkov/bin/checkov ]; then
  echo "bootstrap: installing checkov into .tools/checkov" >&2
  uv_cmd venv --quiet --allow-existing --python .venv/bin/python .tools/checkov
  uv_cmd pip install --quiet --compile-bytecode --python .tools/checkov/bin/python --require-hashes \
    -r infra/checkov/requirements.txt
  touch .tools/checkov/bin/checkov
fi
if [ -n "$inbox_build" ] && ! wait "$inbox_build"; then
  echo "bootstrap: building the web inbox failed (see above; or run: make inbox)" >&2
  exit 1
fi
if [ -n "$asl_tools" ] && ! wait "$asl_tools"; then
  echo "bootstrap: installing the ASL validator failed (see above; or run: cd tools/asl && npm ci)" >&2
  exit 1
fi

# The browser tests (tests/browser/) drive Debian's Chromium; install it where it is missing.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "bootstrap: installing Debian's chromium for the browser tests" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
