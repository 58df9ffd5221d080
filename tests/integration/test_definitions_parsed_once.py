"""The moto stack parses each state machine definition once per worker (tests/integration/conftest.py,
_definitions_parsed_once): a definition that does not parse is still refused, every time it is sent."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

BROKEN = json.dumps({"StartAt": "Missing", "States": {"Only": {"Type": "Pass", "End": True, "Bogus": 1}}})


def test_a_definition_that_does_not_parse_is_refused_every_time(moto_stack: MotoStack) -> None:
    sfn = moto_stack.clients["stepfunctions"]
    role = "arn:aws:iam::123456789012:role/baton-it-sfn"
    for attempt in range(2):
        with pytest.raises(ClientError) as refused:
            sfn.create_state_machine(name=f"broken-{attempt}", definition=BROKEN, roleArn=role)
        assert "ASLParserException" in str(refused.value), refused.value  # moto's InvalidDefinition
    valid = json.dumps({"StartAt": "Only", "States": {"Only": {"Type": "Pass", "End": True}}})
    for name in ("valid-a", "valid-b"):  # the second is the same text: not parsed again, still created
        assert sfn.create_state_machine(name=name, definition=valid, roleArn=role)["stateMachineArn"].endswith(name)
