#!/usr/bin/env bash
# Set up everything Baton needs on a fresh machine that has Python 3.11+, git and Node:
# uv (from PyPI), then the locked environment in .venv. Safe to run again; it only fills gaps.
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON_DOWNLOADS=never  # use this machine's Python; uv cannot fetch interpreters here

if ! python3 -m uv --version >/dev/null 2>&1; then
  echo "bootstrap: installing uv from PyPI" >&2
  python3 -m pip install --quiet --disable-pip-version-check uv \
    || python3 -m pip install --quiet --disable-pip-version-check --user uv
fi
python3 -m uv sync --frozen --quiet
