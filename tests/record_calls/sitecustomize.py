"""On PYTHONPATH (tests/conftest.py puts it there when `BATON_CALLS_DIR` is set), so every Python process
the tests start that runs Baton's functions (each `baton dev`, a bench's embedded stack) records their AWS
calls (tests/call_recorder.py). Recording starts when the Lambda dispatcher is imported: other processes
(the CLI, plain scripts) start as fast as without it."""

import os
import sys

_DISPATCHER = "baton.local.dispatch"


class _RecordFromDispatcherImport:
    """A finder that finds nothing: at the dispatcher's first import it starts the recorder (it stays in
    `sys.meta_path`: removing it while the import walks that list would skip the next finder)."""

    started = False

    def find_spec(self, name: str, *_: object) -> None:
        if name == _DISPATCHER and not self.started:
            self.started = True
            sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
            from tests.call_recorder import install_from_env

            install_from_env()


if os.environ.get("BATON_CALLS_DIR"):
    sys.meta_path.insert(0, _RecordFromDispatcherImport())
