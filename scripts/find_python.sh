#!/usr/bin/env bash
# Prints the path of a Python of version $1 (e.g. 3.13): $2 (an override path) if given, else python$1 on
# PATH, else pyenv's. Found by its path and checked by running it: a pyenv shim named python3.13 answers only
# where pyenv selected that version. Exits 1, printing nothing, when there is none.
set -u
want=$1
for candidate in "${2:-}" "$(command -v "python$want" || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want"*/bin/python"$want"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] \
    && "$candidate" -c "import sys; assert '%d.%d' % sys.version_info[:2] == '$want'" 2>/dev/null; then
    echo "$candidate"
    exit 0
  fi
done
exit 1
