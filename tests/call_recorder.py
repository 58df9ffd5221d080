"""Which AWS calls each function makes, recorded while the tests run its handlers (in the integration
fixtures or a `baton dev` they start), so CI checks every call against that function's deployed role
(tests/roles_check.py). On only when `BATON_CALLS_DIR` names a directory, in every Python process the
tests start (tests/record_calls/sitecustomize.py): each distinct (function, call, resources, code line)
becomes a JSON line of `<dir>/calls-<pid>.jsonl`; a task token is mapped to the state machine that issued
it. A call belongs to the innermost `functions/<name>/` frame that made it (the handler a Lambda invoke
runs), so nothing in the product marks which function runs."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from types import FrameType

CALLS_DIR_ENV: Final = "BATON_CALLS_DIR"
_ROOT = Path(__file__).resolve().parents[1]
_FUNCTIONS: Final = f"{_ROOT / 'functions'}/"
# (path prefix, how a line names it): the package, and functions/<name>/handler.py
_BATON_CODE: Final = ((f"{_ROOT / 'layers/baton/python/baton'}/", "baton/"), (_FUNCTIONS, "functions/"))
_ASL_STATES: Final = "moto.stepfunctions.parser.asl.eval.states"
_ADAPTERS: Final = "baton/adapters/"
# The request parameters that name what a call acts on (the rest is the call's data).
_RESOURCE_KEYS: Final = (
    "TableName",
    "IndexName",
    "TopicArn",
    "TargetArn",
    "stateMachineArn",
    "executionArn",
    "FunctionName",
    "Name",
    "SecretId",
    "projectName",
    "modelId",
    "Bucket",
    "KeyId",
)


class RecordedCall(BaseModel):
    """One distinct AWS call a function made: `resources` are the request's naming parameters (an
    execution ARN's id is dropped, a task token is replaced by its machine's ARN, `token_machine`)."""

    model_config = ConfigDict(frozen=True)

    function: str
    service: str  # the IAM prefix: the service model's signing name (states, dynamodb, sns, ...)
    operation: str  # the API operation (SendTaskSuccess)
    resources: dict[str, str]
    items: tuple[tuple[str, str], ...] = ()  # transactions / batches: (operation or kind, table name)
    line: str  # the first frame in Baton's code (baton/... or functions/...), "path:line"


class _Recorder:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"calls-{os.getpid()}.jsonl"
        self.seen: set[tuple[str, ...]] = set()
        self.token_machines: dict[str, str] = {}
        self.tokens_mapped = False
        self.lock = threading.Lock()

    def on_parameter_build(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if not self.tokens_mapped and _ASL_STATES in sys.modules:  # before any execution issues a token
            self.tokens_mapped = True
            _map_tokens_to_machines(self)
        caller = sys._getframe(1)
        function = _function_of(caller)
        if function is None:  # a call no handler made (a test's, the stack's own set-up)
            return
        line = _baton_line(caller)
        if line is None:  # moto's own calls, made inside a Baton call in the same thread
            return
        resources = {key: str(params[key]) for key in _RESOURCE_KEYS if isinstance(params.get(key), str)}
        if "executionArn" in resources:  # arn:...:execution:<machine>:<id> -> the machine's executions
            resources["executionArn"] = resources["executionArn"].rsplit(":", 1)[0] + ":*"
        token = params.get("taskToken")
        if isinstance(token, str):
            resources["token_machine"] = self.token_machines.get(token, "")
        record = RecordedCall(
            function=function,
            service=model.service_model.signing_name,
            operation=model.name,
            resources=resources,
            items=_items(params),
            line=line,
        )
        key = (function, record.operation, json.dumps(resources, sort_keys=True), str(record.items), line)
        with self.lock:
            if key in self.seen:
                return
            self.seen.add(key)
            with self.path.open("a") as out:
                out.write(record.model_dump_json() + "\n")


def _items(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """(kind, table) of a transaction's items, or (operation, table) of a batch's tables."""
    found: list[tuple[str, str]] = []
    for item in params.get("TransactItems") or ():
        for kind, body in item.items():  # {"Put": {...}}, {"Update": ...}, {"Delete": ...}, {"ConditionCheck": ...}
            found.append((kind, str(body.get("TableName", ""))))
    for table in params.get("RequestItems") or {}:
        found.append(("RequestItems", str(table)))
    return tuple(sorted(set(found)))


def _function_of(frame: FrameType | None) -> str | None:
    """The function whose code is the innermost `functions/<name>/` frame of this stack."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_FUNCTIONS):
            return filename.removeprefix(_FUNCTIONS).split("/", 1)[0]
        frame = frame.f_back
    return None


def _baton_line(frame: FrameType | None) -> str | None:
    """Where Baton made the call: the innermost Baton frame (`baton/adapters/sfn.py:36`), and when that
    is an adapter, the first Baton frame outside the adapters that called it (`<- baton/services/...`).
    None if a moto frame comes first (moto's own calls)."""
    found: list[str] = []
    while frame is not None:
        filename = frame.f_code.co_filename
        if "/moto/" in filename and not found:
            return None
        for prefix, label in _BATON_CODE:
            if filename.startswith(prefix):
                found.append(f"{label}{filename.removeprefix(prefix)}:{frame.f_lineno}")
                if not found[-1].startswith(_ADAPTERS):
                    return " <- ".join(found[:1] + found[-1:] if len(found) > 1 else found)
        frame = frame.f_back
    return found[0] if found else None


_INSTALLED: list[_Recorder] = []


def install_from_env() -> bool:
    """Start recording if `BATON_CALLS_DIR` is set (once per process). True if recording."""
    directory = os.environ.get(CALLS_DIR_ENV)
    if not directory:
        return False
    if _INSTALLED:
        return True
    import botocore.handlers

    recorder = _Recorder(Path(directory))
    _INSTALLED.append(recorder)
    botocore.handlers.BUILTIN_HANDLERS.append(("before-parameter-build", recorder.on_parameter_build))
    import boto3

    if boto3.DEFAULT_SESSION is not None:  # created before this: its future clients record too
        boto3.DEFAULT_SESSION.events.register("before-parameter-build", recorder.on_parameter_build)
    return True


def _map_tokens_to_machines(recorder: _Recorder) -> None:
    """Once moto's interpreter is imported (not at every process's start: most never run one)."""
    from moto.stepfunctions.parser.asl.eval.states import ContextObject

    issue = ContextObject.update_task_token

    def update_task_token(self: Any) -> str:
        token: str = issue(self)
        recorder.token_machines[token] = str(self.context_object_data["StateMachine"]["Id"])
        return token

    ContextObject.update_task_token = update_task_token  # type: ignore[method-assign]
