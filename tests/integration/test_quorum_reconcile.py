"""A met quorum never waits, on moto (the real adapter): the tally of an open quorum pause carries the
sparse QUORUM key of the `pending` index; the release's transaction removes it. When the deciding
voter's release fails (an injected fault after its vote committed), the tally stays met under that key;
the reconciler's one Query (never a Scan) finds it and releases it exactly once."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest
from baton.domain.approval import ApprovalPolicy
from baton.ports import QuorumMet

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "quorum-reconcile"


def _calls(stack: MotoStack) -> Counter[str]:
    """The DynamoDB operations made from now on (botocore's before-call hook)."""
    seen: Counter[str] = Counter()
    db: Any = stack.services.core.store._db  # the store's own client
    db.meta.events.register("before-call.dynamodb", lambda model, **_: seen.update([model.name]))
    return seen


def test_a_met_quorum_whose_release_failed_is_released_once_by_the_reconciler(
    moto_stack: MotoStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    questions, store = moto_stack.services.questions, moto_stack.services.core.store
    policy = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])
    iid = questions.ask(RUN, AskRequest(node="deploy", question="ship?", approval=policy), caller="agent")[
        "interaction_id"
    ]
    questions.answer(RUN, iid, "approve", caller="alice")
    assert store.list_met_tallies() == []  # open, not met
    real = store.transition_interaction

    def dies(interaction: Any, new_state: Any, **kwargs: Any) -> Any:
        if any(isinstance(g, QuorumMet) for g in kwargs.get("guards", ())):
            raise RuntimeError("the decider died before its release")
        return real(interaction, new_state, **kwargs)

    monkeypatch.setattr(store, "transition_interaction", dies)
    with pytest.raises(RuntimeError):
        questions.answer(RUN, iid, "approve", caller="bob")
    monkeypatch.setattr(store, "transition_interaction", real)  # the next process is healthy
    stuck = store.get_interaction(RUN, iid)
    assert stuck is not None and stuck.state.status == "pending" and store.get_tally(RUN, iid).approvals == 2
    assert [(m.run_id, m.interaction_id) for m in store.list_met_tallies()] == [(RUN, iid)]

    calls = _calls(moto_stack)
    reconciler = moto_stack.services.reconciler
    assert reconciler.reconcile().wire()["quorums"] == [{"run_id": RUN, "interaction_id": iid, "kind": "quorum"}]
    assert "Scan" not in calls and calls["Query"] >= 1
    assert reconciler.reconcile()["quorums"] == []  # the release took the tally off the index
    answered = store.get_interaction(RUN, iid)
    assert answered is not None and answered.state.status == "answered" and answered.state.answered_by == "alice, bob"
    types = Counter(e.type for e in store.list_events(RUN, limit=500))
    assert types["quorum_reached"] == 1 and types["interaction_answered"] == 1 and types["approval_recorded"] == 2


def test_a_tally_released_by_its_voter_leaves_the_index(moto_stack: MotoStack) -> None:
    questions, store = moto_stack.services.questions, moto_stack.services.core.store
    policy = ApprovalPolicy(approvals=1, approvers=["alice"])
    iid = questions.ask(RUN, AskRequest(node="deploy", question="ship?", approval=policy), caller="agent")[
        "interaction_id"
    ]
    assert questions.answer(RUN, iid, "approve", caller="alice")["status"] == "answered"
    item = moto_stack.clients["dynamodb"].get_item(
        TableName=moto_stack.provisioned.table_name, Key={"PK": {"S": f"RUN#{RUN}"}, "SK": {"S": f"APT#{iid}"}}
    )["Item"]
    assert "GSI1PK" not in item and "GSI1SK" not in item and item["approvals"]["N"] == "1"
    assert store.list_met_tallies() == [] and moto_stack.services.reconciler.reconcile()["quorums"] == []
