"""moto's Step Functions interpreter parses each JSONPath once per text, not once per use.

Every `InputPath`, `OutputPath`, `ResultPath`, `Parameters` path (`"x.$": "$.y"`) and `ResultSelector`
path of every state is handed to `jsonpath_ng`'s `parse` each time the state runs (moto's
`asl/utils/json_path.py` `extract_json`, `asl/component/common/path/result_path.py`), and that parse
builds a new PLY lexer and parser each call: ~1 ms of CPU a path, several per state, in every callback ->
SUCCEEDED (profiled on the local stack: ~5 of its ~20 ms). The parsed path is only read afterwards (its
`find` and `update_or_create` walk the data, never the path), and depends on the text alone, so
`cached_json_paths` keeps it per text (bounded) and hands the same parsed path to each use. A text that
fails to parse fails each time, as before. `tests/integration/test_moto_jsonpath.py` compares the results
and executions with plain moto and counts the parses.
"""

from __future__ import annotations

import functools
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from baton.local.moto_fixes import KeptPerKey, patched

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

PATH_CACHE_SIZE = 1024  # distinct JSONPath texts kept (a state machine has a few dozen)
# the interpreter's modules that call `parse`, each with its own import of it
PATH_MODULES = (
    "moto.stepfunctions.parser.asl.utils.json_path",
    "moto.stepfunctions.parser.asl.component.common.path.result_path",
)


def _cached_parse(original: Callable[[str], Any]) -> Callable[[str], Any]:
    parsed = KeptPerKey(PATH_CACHE_SIZE)

    @functools.wraps(original)
    def parse(path: str) -> Any:
        if type(path) is not str:
            return original(path)
        return parsed.get(path, lambda: original(path))  # a bad path raises each time: nothing kept

    parse._baton_cached = True  # type: ignore[attr-defined]
    return parse


@contextmanager
def cached_json_paths() -> Iterator[None]:
    """While open, moto's Step Functions interpreter parses each distinct JSONPath text once."""
    import importlib

    with ExitStack() as stack:
        for name in PATH_MODULES:
            module = importlib.import_module(name)
            current = module.__dict__["parse"]
            if not getattr(current, "_baton_cached", False):
                stack.enter_context(patched(module, {"parse": _cached_parse(current)}))
        yield
