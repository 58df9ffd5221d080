"""An interrupt's resume is bound to the state version it was decided on (issue 28, "a decision names what it
decides on"), through the real API handler on moto: two operators preview the same snapshot, one resumes with
edits, and the other's resume decided on the old version is a 409 naming the current version (the edited
state's), with the winner; a resume naming a version the interrupt never had is a 409 that leaves it pending;
a resume without a version (clients before it) is decided on the current one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.state_edits import state_version
from tests.integration.racing import call_api, operator

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

STATE = {"target": "staging", "replicas": 2}


def _interrupt(stack: MotoStack, run_id: str) -> str:
    spec = InterruptSpec(session_id=run_id, prompt="deploy?", state=STATE)
    created, _ = stack.services.interrupts.create(spec, caller="agent")
    return created.interaction_id


def test_a_resume_decided_on_a_state_another_resume_replaced_is_a_409_naming_the_current_version(
    moto_stack: MotoStack,
) -> None:
    iid = _interrupt(moto_stack, "sv-two")
    path = f"/api/v1/interrupts/{iid}"
    seen = [call_api(moto_stack, operator(n), "GET", path, None)[1]["stateVersion"] for n in (1, 2)]  # both preview
    assert seen[0] == seen[1] == state_version(STATE)

    body = {"input": "go", "stateEdits": ["replicas=5"], "stateVersion": seen[0]}
    status, won = call_api(moto_stack, operator(1), "POST", f"{path}/resume", body)
    assert status == 200, won
    edited = state_version({"target": "staging", "replicas": 5})
    assert won["interrupt"]["stateVersion"] == edited and won["interrupt"]["editedState"]["replicas"] == 5

    late = {"input": "go", "stateEdits": ["target=prod"], "stateVersion": seen[1]}
    status, refused = call_api(moto_stack, operator(2), "POST", f"{path}/resume", late)
    assert status == 409, refused
    assert refused["stateVersion"] == edited and refused["given"] == seen[1] and edited in refused["message"]
    assert refused["winner"]["by"] == operator(1) and refused["interrupt"]["editedState"]["target"] == "staging"

    status, again = call_api(moto_stack, operator(1), "POST", f"{path}/resume", body)  # the winner's retry
    assert status == 200 and again["interrupt"]["resolvedBy"] == operator(1), again


def test_a_resume_naming_another_version_leaves_it_pending_and_no_version_takes_the_current(
    moto_stack: MotoStack,
) -> None:
    iid = _interrupt(moto_stack, "sv-other")
    path = f"/api/v1/interrupts/{iid}"
    other = state_version({"target": "prod"})  # another interrupt's snapshot (the CLI's latest pending one)
    status, refused = call_api(
        moto_stack, operator(1), "POST", f"{path}/resume", {"input": "go", "stateVersion": other}
    )
    assert status == 409 and refused["stateVersion"] == state_version(STATE) and refused["reason"] == "state_changed"
    assert call_api(moto_stack, operator(1), "GET", path, None)[1]["status"] == "pending"
    status, resumed = call_api(moto_stack, operator(1), "POST", f"{path}/resume", {"input": "go"})
    assert status == 200 and resumed["interrupt"]["status"] == "answered", resumed
