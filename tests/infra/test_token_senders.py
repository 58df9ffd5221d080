"""Every function that sends gates' task tokens (its `send_task` capability) may also describe the
executions of the machines whose tokens it sends: `Core.release_gate` asks how the run's execution is
doing when Step Functions says the task no longer exists. Without it the release's DescribeExecution is
denied, the wait stays parked and the reconciler logs the error every minute."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.conftest import PREFIX, resources
from tests.infra.test_deadline_timer import _role_of, _statements_of_role
from tests.infra.test_stack import _actions, _flatten, _resources

pytestmark = pytest.mark.infra


def _granted(cfn: dict[str, Any], function: str, action: str) -> set[str]:
    return {
        _flatten(r)
        for s in _statements_of_role(cfn, _role_of(cfn, function))
        if action in _actions(s)
        for r in _resources(s)
    }


def test_every_token_sender_may_describe_the_executions_of_the_machines_it_resumes(cfn: dict[str, Any]) -> None:
    functions = [f["Properties"]["FunctionName"] for f in resources(cfn, "AWS::Lambda::Function").values()]
    senders = [
        name
        for name in (f.removeprefix(f"{PREFIX}-") for f in functions)
        if _granted(cfn, name, "states:SendTaskSuccess")
    ]
    assert {"reconcile", "slack_worker", "await_gate", "gate_deadline", "review_park"} <= set(senders)
    for function in senders:
        machines = _granted(cfn, function, "states:SendTaskSuccess")
        executions = {m.replace(":stateMachine:", ":execution:") + ":*" for m in machines}
        missing = executions - _granted(cfn, function, "states:DescribeExecution")
        assert not missing, (function, sorted(missing))
    assert all(f":stateMachine:{PREFIX}-" in m for m in _granted(cfn, "reconcile", "states:SendTaskSuccess"))
