"""Issue 27, defect 9: one maximum run id length (baton.domain.fields.MAX_RUN_ID_LENGTH), checked at every
door with an error naming it, short enough that every name built from a run id fits its AWS limit."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from baton.api.auth import RUN_SESSION_PREFIX, run_of_session
from baton.cli.main import app
from baton.domain.fields import MAX_RUN_ID_LENGTH, RunId, check_run_id
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import BadRequestError

LONGEST = "r" * MAX_RUN_ID_LENGTH
TOO_LONG = "r" * (MAX_RUN_ID_LENGTH + 1)
ROLE_SESSION_NAME_MAX = 64  # sts:AssumeRole RoleSessionName


class _Door(BaseModel):
    run_id: RunId


def test_the_longest_run_id_passes_and_one_more_character_is_refused_naming_the_limit() -> None:
    assert check_run_id(LONGEST) == LONGEST
    with pytest.raises(BadRequestError) as refused:
        check_run_id(TOO_LONG)
    assert f"1-{MAX_RUN_ID_LENGTH} characters" in refused.value.message
    assert refused.value.details["max_length"] == MAX_RUN_ID_LENGTH


def test_an_agent_role_session_name_fits_for_the_longest_run_id() -> None:
    session = f"{RUN_SESSION_PREFIX}{LONGEST}"
    assert len(session) <= ROLE_SESSION_NAME_MAX
    assert run_of_session(f"arn:aws:sts::123456789012:assumed-role/baton-dev-agent/{session}") == LONGEST


@pytest.mark.parametrize(
    "door",
    [
        lambda run_id: _Door(run_id=run_id),
        lambda run_id: ParkPayload.model_validate(
            {"token": "t", "run_id": run_id, "node": "n", "prompt": "p", "timeout_seconds": 60}
        ),
        lambda run_id: InterruptSpec.model_validate({"session_id": run_id, "prompt": "p"}),
    ],
    ids=["request-models", "gate-payloads", "interrupt-spec"],
)
def test_every_model_door_refuses_a_run_id_over_the_limit(door: object) -> None:
    assert callable(door)
    door(LONGEST)
    with pytest.raises(BadRequestError, match=f"1-{MAX_RUN_ID_LENGTH} characters"):
        door(TOO_LONG)


def test_the_json_schema_states_the_limit() -> None:
    assert _Door.model_json_schema()["properties"]["run_id"]["maxLength"] == MAX_RUN_ID_LENGTH


def test_agent_token_refuses_a_run_id_over_the_limit_before_looking_for_a_stack() -> None:
    result = CliRunner().invoke(app, ["agent-token", TOO_LONG])
    assert result.exit_code == 2
    assert f"1-{MAX_RUN_ID_LENGTH} characters" in result.output
