"""The local stack's Lambda dispatch (`baton/local/dispatch.py`): each concurrent invocation runs in its own
container (a separately loaded handler module), an idle container is reused rather than loaded again, and a
handler's exception comes back shaped as Lambda's Unhandled error."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from baton.local.dispatch import LambdaDispatcher
from baton.workflows.resources import FunctionSpec

HANDLER = """
def lambda_handler(event, context):
    if event.get("fail"):
        raise ValueError("no such thing")
    event["barrier"].wait(10)  # every concurrent invocation is inside a handler at once
    return {"container": __name__, "function": context.function_name}
"""


@dataclass(frozen=True)
class _Spec(FunctionSpec):
    folder: Path = Path()

    @property
    def directory(self) -> Path:
        return self.folder


def _dispatcher(tmp_path: Path) -> LambdaDispatcher:
    (tmp_path / "handler.py").write_text(HANDLER)
    return LambdaDispatcher((_Spec(name="probe", description="a test function", folder=tmp_path),))


def test_concurrent_invocations_get_their_own_containers_and_idle_ones_are_reused(tmp_path: Path) -> None:
    dispatcher = _dispatcher(tmp_path)
    barrier = threading.Barrier(3)
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: dispatcher.invoke("probe", {"barrier": barrier}), range(3)))
    containers = {payload["container"] for payload, errored in results if not errored}
    assert len(containers) == 3 and {payload["function"] for payload, _ in results} == {"probe"}
    again, errored = dispatcher.invoke("probe", {"barrier": threading.Barrier(1)})
    assert not errored and again["container"] in containers  # no fourth load
    assert dispatcher.invocations["probe"] == 4


def test_a_handler_exception_is_lambdas_unhandled_error(tmp_path: Path) -> None:
    payload, errored = _dispatcher(tmp_path).invoke("probe", {"fail": True})
    assert errored and payload["errorType"] == "ValueError" and payload["errorMessage"] == "no such thing"
    assert isinstance(payload["stackTrace"], list) and payload["stackTrace"]
