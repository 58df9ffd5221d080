"""moto's ASL interpreter keeps every thread it starts (baton.local.moto_fixes.sfn_threads_unkept), measured
against plain moto: `fixed=False` is plain moto, where each finished execution leaves its threads in the
interpreter's `TMP_THREADS` list for the life of the process; with the fix none is kept, and the execution
still runs to its end with its history readable, as before."""

from __future__ import annotations

import json
from contextlib import ExitStack

import boto3
import pytest
from moto import mock_aws
from moto.stepfunctions.parser.utils import TMP_THREADS

from baton.local.moto_fixes import sfn_threads_unkept
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
