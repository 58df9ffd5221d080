"""The reconciler (the `reconcile` Lambda, dispatched as deployed) on a gate whose run has ended: the
answer is stored, its send was lost, then the execution stopped and the wait's deadline passed. The
re-send is refused (InvalidToken), so the reconciler asks Step Functions how the execution is doing
(`Core.release_gate` -> DescribeExecution) and, the run having ended, closes the wait instead of
retrying every minute. Run under BATON_CALLS_DIR, this is the call the roles check (tests/roles_check.py)
holds against the reconcile role's states:DescribeExecution."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from baton.local.moto_fixes import sfn_stop_execution
from tests.conftest import FixedClock, wait_for
from tests.integration.conftest import MotoStack
from tests.integration.test_await_gate_sfn import _describe, _park_returned

RUN = "aw-ended"


def test_the_reconciler_closes_the_wait_of_an_ended_run_after_describing_its_execution(moto_stack: MotoStack) -> None:
    services = moto_stack.services
    run = services.runs.start(
        "await_answers", {"timeout_seconds": 30, "questions": [{"question": "Q?"}]}, run_id=RUN, caller="op"
    )
    execution_arn = run.execution_arn or ""
    wait_for(lambda: _park_returned(moto_stack, execution_arn))
    [question] = services.questions.pending(RUN)

    def lost(token: str, output: dict[str, Any]) -> None:
        raise RuntimeError("Step Functions unavailable")

    tokens: Any = services.core.tokens
    tokens.send_success = lost  # the answer is stored, its send is lost
    try:
        assert services.questions.answer(RUN, question.interaction_id, "yes", caller="op")["resumed"] is False
    finally:
        del tokens.send_success
    with sfn_stop_execution():  # as on AWS: the stop ends the token wait too
        moto_stack.clients["stepfunctions"].stop_execution(executionArn=execution_arn, error="Operator")
    wait_for(lambda: _describe(moto_stack, execution_arn)["status"] == "ABORTED")
    services.core.clock = FixedClock(datetime.now(UTC) + timedelta(seconds=60))  # past the wait's deadline

    payload, errored = moto_stack.dispatcher.invoke("reconcile", {})

    assert not errored, payload
    assert payload["released"] == []  # nothing was resumed: the run had ended
    [wait] = services.core.store.list_run_waits(RUN)
    assert wait.status == "released"  # closed, so the next pass does not try it again
