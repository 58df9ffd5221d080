"""An operator's answer from a channel (an email link, a Slack button, a push notification's one tap): the
API's own service call for the item's kind, as that operator, so a channel gets the same checks, the same
409 naming the winner and the same 410 past a deadline as the API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton.contracts import InterruptResumed
    from baton.contracts.questions import AnswerResult
    from baton.contracts.runs import ResumeResult
    from baton.models import Interaction
    from baton.services.core import Core


def answer_as(
    core: Core, item: Interaction, value: Any, operator: str, *, via: str | None = None
) -> AnswerResult | ResumeResult | InterruptResumed | None:
    """Answer `item` with `value` as `operator`; None for a kind no channel answers (a review has its own
    actions). `via`: the channel, kept in the decision (`InteractionAnswered.via`) where the kind records it."""
    run_id, iid, kind = item.run_id, item.interaction_id, item.request.kind
    if kind == "question":
        from baton.services.questions import QuestionService

        return QuestionService(core).answer(run_id, iid, value, caller=operator, via=via)
    if kind == "tool_approval":
        from baton.services.tool_approvals import ToolApprovalService

        return ToolApprovalService(core).answer(run_id, iid, value, caller=operator, via=via)
    if kind == "ask":
        from baton.services.pauses import Resume
        from baton.services.runs import RunService

        return RunService(core).resume(Resume(run_id, {"answer": value}, caller=operator, node=item.request.node))
    if kind == "interrupt":
        from baton.contracts import ResumeInterrupt
        from baton.services.interrupts import InterruptService

        return InterruptService(core).resume(iid, ResumeInterrupt(input=value), caller=operator)
    return None
