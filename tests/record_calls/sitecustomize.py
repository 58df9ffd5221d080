"""On PYTHONPATH (tests/conftest.py puts it there when `BATON_CALLS_DIR` is set), so every Python process
the tests start (xdist's workers, each `baton dev`) records its functions' AWS calls (tests/call_recorder.py)."""

import contextlib
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2]))  # last: the repository's `tests` package only

with contextlib.suppress(ImportError):  # a Python without Baton's dependencies makes no AWS call to record
    from tests.call_recorder import install_from_env

    install_from_env()
