"""The review gate's door: the reserved `__review_*` answers parsed once into a `ReviewDecision`."""

from __future__ import annotations

from typing import Any

import pytest

from baton.domain.review_decision import ReviewDecision
from baton.errors import ValidationFailedError


def test_the_reserved_keys_become_a_decision_with_stripped_texts() -> None:
    decision = ReviewDecision.from_answers(
        {
            "__review_action": "force_merge",
            "__review_message": "  Ship it  ",
            "__review_merge_strategy": "merge",
            "__review_reason": " the TODO is tracked ",
            "__review_head": "abc123",
        }
    )
    assert decision == ReviewDecision(
        action="force_merge",
        message="Ship it",
        merge_strategy="merge",
        reason="the TODO is tracked",
        seen_head="abc123",
    )
    assert decision.merges and not ReviewDecision(action="request_changes").merges
    # Back to the wire keys (what a late answer is kept as): only the ones given.
    assert ReviewDecision.from_answers(decision.answers()) == decision
    assert ReviewDecision(action="reply", reply="why?").answers() == {
        "__review_action": "reply",
        "__review_reply": "why?",
    }


@pytest.mark.parametrize(
    ("answers", "path"),
    [
        ({"__review_action": "approve_merge", "approved": True}, "approved"),
        ({}, "__review_action"),
        ({"__review_action": "merge_now"}, "__review_action"),
        ({"__review_action": "reply", "__review_reply": 5}, "__review_reply"),
        ({"__review_action": "reply", "__review_reply": "   "}, "__review_reply"),
        ({"__review_action": "approve_merge", "__review_reply": "hi"}, "__review_reply"),
        ({"__review_action": "approve_merge", "__review_merge_strategy": "rebase"}, "__review_merge_strategy"),
        ({"__review_action": "request_changes", "__review_merge_strategy": "squash"}, "__review_merge_strategy"),
    ],
)
def test_anything_else_is_a_422_naming_the_key(answers: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationFailedError) as refused:
        ReviewDecision.from_answers(answers)
    assert refused.value.details["path"] == path


def test_a_decision_built_in_code_keeps_the_same_rules() -> None:
    with pytest.raises(ValidationFailedError, match="a reply needs text"):
        ReviewDecision(action="reply")
    with pytest.raises(ValidationFailedError, match="goes only with __review_action=approve_merge"):
        ReviewDecision(action="request_changes", merge_strategy="merge")
