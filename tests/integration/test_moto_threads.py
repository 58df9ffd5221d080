"""Two thread costs of moto's ASL interpreter (baton.local.moto_fixes), each measured against plain moto
(`plain-moto`): `sfn_threads_unkept`, plain moto keeps every finished execution's threads in its
`TMP_THREADS` list for the life of the process, the fix keeps none, and the execution still runs to its end
with its history readable; `sfn_program_inline`, plain moto holds two threads per parked execution, the fix
one (two still with a top-level TimeoutSeconds, which needs the second to time the program out)."""

from __future__ import annotations

import json
import threading
from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.stepfunctions.parser.utils import TMP_THREADS

from baton.local.moto_fixes import sfn_program_inline, sfn_threads_unkept
from tests.conftest import wait_for
from tests.integration.conftest import MOTO_CONFIG

ROLE = "arn:aws:iam::123456789012:role/r"
PASS_AND_WAIT = {
    "StartAt": "Pass",
    "States": {"Pass": {"Type": "Pass", "Next": "Wait"}, "Wait": {"Type": "Wait", "Seconds": 0, "End": True}},
}
EXECUTIONS = 5


@pytest.mark.usefixtures("aws_env")
@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "plain-moto"])
def test_a_finished_execution_leaves_no_thread_behind(fixed: bool) -> None:
    with mock_aws(config=MOTO_CONFIG), ExitStack() as fixes:
        if fixed:
            fixes.enter_context(sfn_threads_unkept())
        sfn = boto3.client("stepfunctions")
        machine = sfn.create_state_machine(name="m", definition=json.dumps(PASS_AND_WAIT), roleArn=ROLE)
        kept_before = len(TMP_THREADS)
        arns = [
            sfn.start_execution(stateMachineArn=machine["stateMachineArn"], name=f"e{n}")["executionArn"]
            for n in range(EXECUTIONS)
        ]
        for arn in arns:
            wait_for(lambda arn=arn: sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED")
        kept = len(TMP_THREADS) - kept_before
        history = sfn.get_execution_history(executionArn=arns[0])["events"]

    assert history[0]["type"] == "ExecutionStarted"
    assert history[-1]["type"] == "ExecutionSucceeded"
    if fixed:
        assert kept == 0
    else:  # moto keeps at least the execution's thread and its program's, per execution
        assert kept >= 2 * EXECUTIONS


PARKED = {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 3600, "End": True}}}
TIMED = {**PARKED, "TimeoutSeconds": 3600}


def _threads_while_parked(sfn: Any, definition: dict[str, Any]) -> int:
    """Threads one execution holds while its Wait waits; it is stopped, and its threads ended, after."""
    machine = sfn.create_state_machine(name=f"m{len(definition)}", definition=json.dumps(definition), roleArn=ROLE)
    # the threads started since, not a count of all: an earlier test's threads may end meanwhile
    before = set(threading.enumerate())
    arn = sfn.start_execution(stateMachineArn=machine["stateMachineArn"])["executionArn"]
    wait_for(
        lambda: any(e["type"] == "WaitStateEntered" for e in sfn.get_execution_history(executionArn=arn)["events"])
    )
    started = [thread for thread in threading.enumerate() if thread not in before]
    sfn.stop_execution(executionArn=arn)
    wait_for(lambda: not any(thread.is_alive() for thread in started))
    return len(started)


@pytest.mark.usefixtures("aws_env")
@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "plain-moto"])
def test_a_parked_execution_holds_one_thread(fixed: bool) -> None:
    with mock_aws(config=MOTO_CONFIG), ExitStack() as fixes:
        if fixed:
            fixes.enter_context(sfn_program_inline())
        sfn = boto3.client("stepfunctions")
        assert _threads_while_parked(sfn, PARKED) == (1 if fixed else 2)
        assert _threads_while_parked(sfn, TIMED) == 2  # a top-level TimeoutSeconds keeps moto's second thread
