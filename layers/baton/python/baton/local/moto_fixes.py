"""Where moto 5.2 behaves unlike AWS in ways Baton relies on, it is made to behave as AWS does.

* Conditional writes: moto checks a ConditionExpression, then writes without a lock, so two racing writes can both
  pass (seen: 2 of 20). One re-entrant lock serializes moto's DynamoDB calls (reads too: a read walking the table
  while another thread inserts fails); at the end of each outermost hold, before the response leaves, the
  `after_each_write` hooks run (the journal).
* `states:startExecution.sync:2`: moto leaves the casing alone, so ASL's `StateMachineArn`/`Input` reach botocore
  unconverted and `$.Output` is never found; AWS converts both.
* StopExecution: moto only marks the program stopped, so a `waitForTaskToken` Task keeps waiting (and a stop during
  the Task's Lambda ends FAILED with a States.Runtime error); AWS ends it ABORTED at once.
* What moto keeps forever and AWS does not: every interpreter thread in `TMP_THREADS` (~5 kB a finished execution,
  `sfn_threads_unkept`); every model in its class's `instances_tracked`, for a dashboard the local stack does not
  serve (each DynamoDB `Item` ever written: 2.3 per stored item after a soak, `models_untracked`); every message a
  topic published (~1.5 kB a soak request, `sns_messages_unkept`).
* No status-change event when an execution ends: the deployment's EventBridge rule (infra/capabilities/lifecycle.py)
  feeds run_lifecycle; `execution_end_events` sends the same event from moto's
  `BaseExecutionWorkerCommunication.terminated`, the one call every ending execution makes (status, stop date,
  output, error and cause set), in the execution's worker thread.
* A terminal full of parse trees: the interpreter logs every failed state with its whole tree, once per nesting
  level; a run that fails on purpose is already a line and events of its own, so without -v those reports are
  dropped (`quiet_interpreter`).
* A second thread per running execution that only waits, to time out a top-level TimeoutSeconds (no Baton machine
  has one): the program runs on the execution's own (greenlet), ~30 kB less per open gate with its timer
  (`sfn_program_inline`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import logging
import sys
import threading
import time
from contextlib import contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

from baton.domain.execution_events import DETAIL_TYPE, SOURCE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_WRITES = ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item")
_READS = ("get_item", "query", "scan", "batch_get_item", "transact_get_items")  # a walk fails while a write inserts
_write_hooks: list[Callable[[], None]] = []


class _DynamoLock:
    """Re-entrant; at the end of each outermost hold, before it is released, the write hooks run."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._held = threading.local()

    def __enter__(self) -> _DynamoLock:
        self._lock.acquire()
        self._held.depth = getattr(self._held, "depth", 0) + 1
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self._held.depth -= 1
            if not self._held.depth:
                for hook in _write_hooks:
                    hook()  # the journal's: nothing to do when nothing changed
        finally:
            self._lock.release()


_lock = _DynamoLock()


def dynamodb_lock() -> _DynamoLock:
    """The lock every moto DynamoDB call runs under while `atomic_dynamodb_writes` is open (a snapshot
    taken under it is consistent: no write is half done)."""
    return _lock


@contextmanager
def after_each_write(hook: Callable[[], None]) -> Iterator[None]:
    """While open, `hook` (the journal's commit) runs at the end of each outermost hold; its error fails the request."""
    _write_hooks.append(hook)
    try:
        yield
    finally:
        _write_hooks.remove(hook)


def _wrap(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _lock:
            return method(*args, **kwargs)

    wrapper._baton_atomic = True  # type: ignore[attr-defined]
    return wrapper


@contextmanager
def atomic_dynamodb_writes() -> Iterator[None]:
    """While open, every moto DynamoDB request and backend call (some callers reach it directly) runs under the lock."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.responses import DynamoHandler

    if getattr(DynamoDBBackend.put_item, "_baton_atomic", False):  # already installed (nested use)
        yield
        return
    names = [name for name in _WRITES + _READS if name in DynamoDBBackend.__dict__]
    locked: dict[str, Any] = {name: _wrap(getattr(DynamoDBBackend, name)) for name in names}
    with (
        patch.multiple(DynamoDBBackend, **locked),
        patch.object(DynamoHandler, "call_action", _wrap(DynamoHandler.call_action)),
    ):
        yield


# The modules of moto's interpreter an execution runs that append to `TMP_THREADS` (moto 5.2.5), each by its own name.
SFN_THREAD_LIST_MODULES = (
    "moto.stepfunctions.parser.backend.execution_worker",
    "moto.stepfunctions.parser.asl.component.program.program",
    "moto.stepfunctions.parser.asl.component.state.exec.execute_state",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback",
    "moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branch_worker",
    "moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.inline_iteration_component",
)


@contextmanager
def sfn_integration_casing() -> Iterator[None]:
    """While open, moto's Step Functions service integration converts casing as AWS does."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
        StateTaskServiceSfn,
    )

    original_params = StateTaskServiceSfn._normalise_parameters
    original_response = StateTaskServiceSfn._normalise_response

    def normalise_parameters(self: Any, parameters: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        original_params(self, parameters, *args, **kwargs)
        for key in [k for k in parameters if k[:1].isupper()]:
            parameters[key[:1].lower() + key[1:]] = parameters.pop(key)

    def normalise_response(self: Any, response: Any, *args: Any, **kwargs: Any) -> None:
        original_response(self, response, *args, **kwargs)
        if isinstance(response, dict):
            for key in [k for k in response if k[:1].islower()]:
                response[key[:1].upper() + key[1:]] = response.pop(key)

    fixed: dict[str, Any] = {"_normalise_parameters": normalise_parameters, "_normalise_response": normalise_response}
    with patch.multiple(StateTaskServiceSfn, **fixed):
        yield


PROGRAM_START_WAIT_S = 5.0


@contextmanager
def sfn_stop_execution() -> Iterator[None]:
    """While open, moto's StopExecution ends the execution at once as ABORTED, as AWS does."""
    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.backend.execution import Execution

    original_stop = Execution.stop

    def stop(self: Any, stop_date: Any, error: str | None, cause: str | None) -> None:
        worker = self.exec_worker
        if worker is None or self.exec_status != ExecutionStatus.RUNNING:
            original_stop(self, stop_date=stop_date, error=error, cause=cause)
            return
        # A stop right after its start: the execution's thread may still be parsing the definition, before
        # its environment exists (moto's stop then fails with an AttributeError; on AWS the stop succeeds).
        deadline = time.monotonic() + PROGRAM_START_WAIT_S
        while getattr(worker, "env", None) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        original_stop(self, stop_date=stop_date, error=error, cause=cause)  # the program is ProgramStopped
        self.error, self.cause = error or None, cause or None  # moto's StopExecution passes ""
        communication = worker._execution_communication
        worker._execution_communication = SimpleNamespace(terminated=lambda: None)  # its own end changes nothing
        communication.terminated()  # ABORTED (from ProgramStopped) and stop date now; the end is reported
        for endpoint in list(worker.env.callback_pool_manager._pool.values()):
            endpoint.interrupt_all()  # the token waits return, so the stopped worker thread ends

    with patch.multiple(Execution, stop=stop):
        yield


@contextmanager
def sfn_threads_unkept() -> Iterator[None]:
    """While open, the interpreter's threads are not kept after they end (they run as before)."""
    with contextlib.ExitStack() as patches:
        for name in SFN_THREAD_LIST_MODULES:
            unkept = SimpleNamespace(append=lambda _thread: None)  # `append` is the only use moto makes of it
            patches.enter_context(patch.object(importlib.import_module(name), "TMP_THREADS", unkept))
        yield


@contextmanager
def sfn_program_inline() -> Iterator[None]:
    """While open, a program with no top-level TimeoutSeconds runs on its execution's thread."""
    from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
    from moto.stepfunctions.parser.asl.component.program.program import Program

    original_eval = Program.eval

    def eval_program(self: Any, env: Any) -> None:
        if self.timeout_seconds is not None:
            original_eval(self, env)  # its second thread is what times it out
            return
        env.next_state_name = self.start_at.start_at_name
        EvalComponent.eval(self, env)  # what moto's thread runs (`super().eval`), here

    with patch.object(Program, "eval", eval_program):
        yield


@contextmanager
def models_untracked() -> Iterator[None]:
    """While open, no model is kept in `instances_tracked` (those kept are dropped): moto alone holds each."""
    from moto.core.common_models import BaseModel
    from moto.core.model_instances import reset_model_data

    def new(cls: type[BaseModel], *_args: Any, **_kwargs: Any) -> Any:
        return super(BaseModel, cls).__new__(cls)  # BaseModel.__new__ without its append

    reset_model_data()
    with patch.object(BaseModel, "__new__", new):
        yield


@contextmanager
def sns_messages_unkept() -> Iterator[None]:
    """While open, a topic keeps no message once it is delivered to its subscriptions."""
    from moto.sns.models import Topic

    original_publish = Topic.publish

    def publish(self: Any, *args: Any, **kwargs: Any) -> str:
        try:
            return str(original_publish(self, *args, **kwargs))
        finally:
            self.sent_notifications.clear()

    with patch.object(Topic, "publish", publish):
        yield


def _millis(value: Any) -> int | None:
    return int(value.timestamp() * 1000) if value is not None else None


def status_change_event(execution: Any) -> dict[str, Any]:
    """The EventBridge event Step Functions sends for this (moto) execution's status."""
    status = execution.exec_status.value if execution.exec_status is not None else "RUNNING"
    return {
        "version": "0",
        "source": SOURCE,
        "detail-type": DETAIL_TYPE,
        "account": execution.account_id,
        "region": execution.region_name,
        "resources": [execution.exec_arn],
        "detail": {
            "executionArn": execution.exec_arn,
            "stateMachineArn": execution.state_machine_arn,
            "name": execution.name,
            "status": status,
            "startDate": _millis(execution.start_date),
            "stopDate": _millis(execution.stop_date),
            "input": json.dumps(execution.input_data),
            "output": json.dumps(execution.output) if execution.output is not None else None,
            "error": execution.error,
            "cause": execution.cause,
        },
    }


@contextmanager
def execution_end_events(deliver: Callable[[dict[str, Any]], object]) -> Iterator[None]:
    """While open, every ended moto execution's status-change event goes to `deliver`."""
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

    original = BaseExecutionWorkerCommunication.terminated

    def terminated(self: Any) -> None:
        original(self)
        try:
            deliver(status_change_event(self.execution))
        except Exception:  # like a failed rule target: logged, and the read path still records the end
            logging.getLogger("baton").exception("run lifecycle delivery failed")

    with patch.object(BaseExecutionWorkerCommunication, "terminated", terminated):
        yield


# The interpreter's failure reports: a failure it hands back as the execution's result, which the run's end says.
FAILURE_REPORT_LOGGER = "moto.stepfunctions.parser.asl.component.eval_component"
FAILURE_REPORT_PREFIX = "Stepfunctions computation ended with exception"


@contextmanager
def quiet_interpreter() -> Iterator[logging.Handler]:
    """Until exit: the interpreter's records stop at its own logger, whose one handler drops the
    failure reports and prints the rest on stderr (its warnings, as before, stay below ERROR)."""
    logger = logging.getLogger("moto.stepfunctions.parser")
    level, propagate = logger.level, logger.propagate
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(lambda r: r.name != FAILURE_REPORT_LOGGER and not str(r.msg).startswith(FAILURE_REPORT_PREFIX))
    handler.setFormatter(logging.Formatter("emulator: %(message)s"))
    logger.setLevel(logging.ERROR)
    logger.propagate = False
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
