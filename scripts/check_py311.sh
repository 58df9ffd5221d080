#!/usr/bin/env bash
# The CLI and the SDK on Python 3.11, the oldest the package supports (pyproject requires-python), while
# .venv runs the Lambda runtime's 3.13 (scripts/bootstrap.sh): a second locked environment, .venv-3.11
# (linked from uv's cache, not compiled), runs `baton --help`, imports the SDK, and runs the CLI's and
# the SDK's unit tests. Part of `make test`. It is synced without the `local` extra (no moto), as
# `pip install baton` installs it: the CLI and the SDK work without it, and `baton dev` says how to get it.
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON_DOWNLOADS=never
python311=$(./scripts/find_python.sh 3.11 "${BATON_PYTHON_311:-}" || true)
if [ -z "$python311" ]; then
  echo "check_py311: no Python 3.11 on this machine (set BATON_PYTHON_311)" >&2
  exit 1
fi
uv_cmd() {
  if python3 -m uv --version >/dev/null 2>&1; then python3 -m uv "$@"
  elif [ -x .tools/bin/uv ]; then .tools/bin/uv "$@"
  else uv "$@"; fi
}
UV_PROJECT_ENVIRONMENT=.venv-3.11 uv_cmd sync --frozen --quiet --python "$python311"
venv=.venv-3.11/bin
"$venv/python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version'
if "$venv/python" -c 'import moto' 2>/dev/null; then
  echo "check_py311: moto is installed without the local extra (pyproject.toml)" >&2
  exit 1
fi
"$venv/baton" --help >/dev/null
dev_status=0 dev_state=$(mktemp -d)
dev_said=$(timeout 60 "$venv/baton" dev --state-dir "$dev_state" 2>&1) || dev_status=$?
rm -rf "$dev_state"
if [ "$dev_status" != 2 ] || [[ "$dev_said" != *"pip install 'baton[local]'"* ]]; then
  echo "check_py311: without moto, baton dev exited $dev_status and said: $dev_said" >&2
  exit 1
fi
"$venv/python" -c 'import baton; from baton.client import Client; assert baton.Client is Client'
# PYTHONDONTWRITEBYTECODE may be set: nothing here is compiled, so the tests import from source.
"$venv/python" -m pytest -q -p no:cacheprovider tests/unit/test_cli_ask.py tests/unit/test_cli_errors.py \
  tests/unit/test_cli_imports.py tests/unit/test_cli_newcomer.py tests/unit/test_sdk_pauses.py \
  tests/unit/test_sigv4.py tests/unit/test_mcp_stdio.py tests/unit/test_local_extra.py
