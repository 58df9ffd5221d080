"""A met quorum never waits: the reconciler's pass over quorums met but not released.

The vote that meets a quorum (or the rejection rule) is committed before its pause is released (the
release is the pause's own conditional transition, `baton/services/approvals.py`). If the deciding
voter's process dies, or its release fails, between the two, the tally stays met with the pause still
pending. `ApprovalStore.list_met_tallies` lists exactly those (deployed: a sparse key of the `pending`
index that the release's transaction removes; one Query, never a Scan); each is settled here as its
decider would have: the question answered with the approving (or rejecting) answer, the interrupt
resumed (or cancelled), through the same guarded transition, so exactly once however many passes,
retries or late voters race it. A tally whose pause ended another way (timed out) is taken off the list.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from baton.errors import ConflictError, GoneError
from baton.models import QuestionRequest
from baton.services.pause_quorum import PauseQuorum

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.domain.approval import MetTally
    from baton.models import Interaction
    from baton.services.core import Core
    from baton.services.interrupts import InterruptService
    from baton.services.questions import QuestionService
    from baton.services.review import ReviewService

log = logging.getLogger("baton")
_Services = tuple["QuestionService", "InterruptService", "Callable[[], ReviewService] | None"]


def _settle_question(questions: QuestionService, question: Interaction) -> bool:
    policy = question.request_as(QuestionRequest).approval
    if policy is None:
        return False
    ballot = questions.approvals.standing(question, policy)
    if ballot.decision is None:
        return False
    decided = questions.approvals.decided(question, policy, ballot)
    try:
        questions.answer(question.run_id, question.interaction_id, decided.answer, caller=decided.by, decided=decided)
    except ConflictError:  # a late voter or another pass released it first
        return False
    return True


def settle_met_quorums(
    core: Core,
    questions: QuestionService,
    interrupts: InterruptService,
    review: Callable[[], ReviewService] | None = None,
) -> list[dict[str, str]]:
    """Release every quorum met but not released; returns the ones this pass released."""
    released: list[dict[str, str]] = []
    for met in core.store.list_met_tallies():
        try:
            if _settle(core, (questions, interrupts, review), met):
                released.append({"run_id": met.run_id, "interaction_id": met.interaction_id, "kind": "quorum"})
        except GoneError:  # its run or gate ended first: nothing waits for the decision
            core.store.close_tally(met.run_id, met.interaction_id)
        except Exception:
            log.exception("reconcile: releasing a met quorum failed", extra=met.model_dump())
    return released


def _settle(core: Core, services: _Services, met: MetTally) -> bool:
    questions, interrupts, review = services
    pause = core.store.get_interaction(met.run_id, met.interaction_id)
    if pause is None or pause.state.status != "pending":
        core.store.close_tally(met.run_id, met.interaction_id)  # ended another way (or a stale index read)
        return False
    if pause.request.kind == "question":
        return _settle_question(questions, pause)
    if pause.request.kind == "interrupt":
        return interrupts.settle_quorum(pause)
    if pause.request.kind == "ask":  # a hosted park or a blocking ask (baton/services/pause_quorum.py)
        return PauseQuorum(core).settle_standing(pause)
    if pause.request.kind == "review" and review is not None:  # baton/services/review/quorum.py
        return review().settle_quorum(pause)
    return False
