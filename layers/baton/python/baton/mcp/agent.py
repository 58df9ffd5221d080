"""What each MCP tool does, for one run and one caller, through Baton's own services.

No call is held past its bound: a wait (`await_answers`, `ask_user`, `interrupt`, `get_interrupt`)
polls the store for at most `WaitPolicy.max_call_seconds` (20 s; API Gateway cuts an integration at
29 s), less when the Lambda has less time left or the deadline is nearer, then returns "pending". The
overall deadline is the server's, stored in the table and never re-armed by a later call:

- await_answers / ask_user: the run's tool-form `await` interaction for the scope (created once by
  `QuestionService.await_tool`, a conditional put; its `expires_at` is the deadline). A call past it
  ends it as its timer does (`QuestionService.time_out_tool_await`); once it timed out while any of its
  questions is still open, the result is "timed_out" and names the unanswered questions.
- interrupt / get_interrupt: the interrupt's own `expires_at`, enforced by `InterruptService`.

The clock (`Core.clock`) decides deadlines; `WaitPolicy.sleep`/`monotonic` are injected so tests never
wait for real.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.domain.ladder import TIMED_OUT_DEFAULT, USE_QUESTION_DEFAULTS, Ladder, LadderFields
from baton.errors import ForbiddenError, NotFoundError, ValidationFailedError
from baton.ids import parse_iso

# The records, the interrupt spec and service are imported by the tool calls that use them: the MCP door's
# cold start (an `initialize` or `tools/list`) needs the tools' models only (tests/unit/test_lambda_imports.py).
if TYPE_CHECKING:
    from collections.abc import Callable

    from pydantic import BaseModel

    from baton.api.auth import Caller
    from baton.contracts.questions import AwaitAnswered, AwaitPending, AwaitRequest
    from baton.mcp.tools import (
        AskAsyncArgs,
        AskUserArgs,
        AwaitArgs,
        DrainArgs,
        GetInterruptArgs,
        InterruptArgs,
    )
    from baton.models import Interaction
    from baton.runtime.wiring import Services
    from baton.services.interrupts import InterruptService

MAX_CALL_WAIT_SECONDS = 20.0
LAMBDA_MARGIN_SECONDS = 4.0  # leave the handler this much of its Lambda time to answer
# Polling stops this long before the call's bound: the last store reads and the answer fit in it, so the
# whole call, not just its sleeps, stays within `max_call_seconds`.
FINISH_RESERVE_SECONDS = 1.0
FIRST_POLL_SECONDS = 0.5
POLL_BACKOFF = 1.5
MAX_POLL_SECONDS = 2.5
ASK_USER_NODE_PREFIX = "ask_user."  # each blocking question gets its own node, so its scope is itself


@dataclass(frozen=True)
class WaitPolicy:
    max_call_seconds: float = MAX_CALL_WAIT_SECONDS
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    # Seconds the Lambda invocation has left (None: no limit but max_call_seconds).
    remaining_seconds: Callable[[], float] | None = None


@dataclass
class Outcome:
    """A tool's result: `data` is the structured content, `text` what the model reads first."""

    data: dict[str, Any]
    text: str


def _fields(args: BaseModel, *, without: tuple[str, ...] = ()) -> dict[str, Any]:
    """A tool's arguments by the name the wire spells them (an alias: `schema`), as validated: the service's
    request spells them the same."""
    declared = type(args).model_fields
    return {declared[name].alias or name: value for name, value in args if name not in without}


def _question(i: Interaction) -> dict[str, Any]:
    return {"interaction_id": i.interaction_id, "node": i.request.node, "question": i.request.prompt}


class AgentTools:
    def __init__(self, services: Services, run_id: str, caller: Caller, policy: WaitPolicy | None = None) -> None:
        self.services = services
        self.run_id = run_id
        self.caller = caller
        self.policy = policy or WaitPolicy()

    # ---- the clock -----------------------------------------------------------------------------
    def _budget(self, started: float, deadline: str | None) -> float:
        """How long this call may still wait: the call's bound, the Lambda's time, the deadline."""
        p = self.policy
        budget = p.max_call_seconds - min(FINISH_RESERVE_SECONDS, p.max_call_seconds / 4) - (p.monotonic() - started)
        if p.remaining_seconds is not None:
            budget = min(budget, p.remaining_seconds() - LAMBDA_MARGIN_SECONDS)
        if deadline is not None:
            budget = min(budget, self._seconds_until(deadline))
        return max(0.0, budget)

    def _seconds_until(self, deadline: str) -> float:
        return (parse_iso(deadline) - self.services.core.clock.now()).total_seconds()

    def poll(self, ready: Callable[[], bool], started: float, deadline: str | None) -> bool:
        """Re-check `ready` with backoff until it holds or the budget is spent; never sleeps past it."""
        interval = FIRST_POLL_SECONDS
        while True:
            if ready():
                return True
            budget = self._budget(started, deadline)
            if budget <= 0:
                return False
            self.policy.sleep(min(interval, budget))
            interval = min(interval * POLL_BACKOFF, MAX_POLL_SECONDS)

    def _waited(self, started: float) -> float:
        return round(self.policy.monotonic() - started, 1)

    # ---- questions -----------------------------------------------------------------------------
    def ask_user_async(self, args: AskAsyncArgs) -> Outcome:
        from baton.contracts.questions import AskRequest

        request = AskRequest.model_validate(_fields(args))
        posted = self.services.questions.ask(self.run_id, request, caller=self.caller.principal)
        return Outcome(posted.model_dump(), f"question posted; keep working (question id {posted.interaction_id})")

    def _pending(self, from_node: str | None) -> list[Interaction]:
        found = self.services.questions.pending(self.run_id)
        return [i for i in found if not from_node or i.request.node == from_node]

    def _latest_await(self, from_node: str | None) -> Interaction | None:
        scope = from_node or "*"
        awaits = self.services.core.store.list_run_interactions(self.run_id, kind="await")
        mine = [i for i in awaits if i.request.node == scope]
        return max(mine, key=lambda i: (i.created_at, i.interaction_id)) if mine else None

    def _answered(self, scope: AwaitRequest, started: float) -> Outcome | None:
        """The answers when nothing in scope is pending (completing the scope's tool await), else None.
        The scope's deadline and ladder are the caller's: should a question land meanwhile, its await
        gets them."""
        result = self._await_tool(scope)
        if result.status != "answered":
            return None  # a question was posted meanwhile
        answers = [a.model_dump() for a in result.answers]
        data = {"status": "answered", "answers": answers, "waited_s": self._waited(started)}
        return Outcome(data, f"all {len(answers)} question(s) answered; the answers are below")

    def _timed_out(self, awaiting: Interaction, pending: list[Interaction]) -> Outcome:
        unanswered = [_question(i) for i in pending]
        data = {"status": "timed_out", "deadline": awaiting.expires_at, "unanswered": unanswered}
        listed = "; ".join(f"{q['interaction_id']}: {q['question']!r}" for q in unanswered)
        text = (
            f"the deadline {awaiting.expires_at} passed; {len(unanswered)} question(s) went unanswered ({listed}). "
            "Decide without them, say which assumption you made, and go on."
        )
        return Outcome(data, text)

    def _past_deadline(
        self, awaiting: Interaction | None, from_node: str | None, pending: list[Interaction]
    ) -> Outcome | None:
        """The scope's wait, once its stored deadline ended it: timed out naming its questions still open.
        Met here first, it ends by its timer's own path (`time_out_tool_await`, a conditional write: the
        timer and this call never both end it; under `use_question_defaults` the defaults are taken first),
        so the service alone decides what the deadline does. None: not ended, answered, or nothing open."""
        if awaiting is None:
            return None
        if awaiting.state.status == "pending" and self.services.core.is_past(awaiting.expires_at):
            if self.services.questions.time_out_tool_await(self.run_id, awaiting.interaction_id):
                return self._timed_out(awaiting, self._pending(from_node))  # as its `await_timed_out` names them
            ended = self.services.core.store.get_interaction(self.run_id, awaiting.interaction_id)
            if ended is None or ended.state.status != "timed_out":
                return None  # answered: by the defaults or a last answer
            awaiting, pending = ended, self._pending(from_node)  # ended by its timer first
        if awaiting.state.status != "timed_out":
            return None
        from baton.models import AwaitToolRequest

        # Ended earlier: only the questions it waited for (a question asked since belongs to a new wait).
        waited_for = set(awaiting.request_as(AwaitToolRequest).pending)
        still_open = [i for i in pending if i.interaction_id in waited_for]
        return self._timed_out(awaiting, still_open) if still_open else None

    def _await_tool(self, scope: AwaitRequest) -> AwaitAnswered | AwaitPending:
        return self.services.questions.await_tool(self.run_id, scope, caller=self.caller.principal)

    def _await(self, scope: AwaitRequest, started: float) -> Outcome:
        from_node = scope.from_ or None
        pending = self._pending(from_node)
        if not pending and (answered := self._answered(scope, started)) is not None:
            return answered
        expired = self._past_deadline(self._latest_await(from_node), from_node, pending)
        if expired is not None:
            return expired
        result = self._await_tool(scope)
        if result.status == "answered":
            return self._answered(scope, started) or self._await(scope, started)
        awaiting = self.services.core.store.get_interaction(self.run_id, result.interaction_id)
        deadline = awaiting.expires_at if awaiting else None
        last: list[list[Interaction]] = []

        def all_answered() -> bool:
            last[:] = [self._pending(from_node)]
            return not last[0]

        if self.poll(all_answered, started, deadline):
            answered = self._answered(scope, started)
            if answered is not None:
                return answered
            last.clear()  # a question was posted meanwhile: read the scope again
        pending = last[0] if last else self._pending(from_node)
        if awaiting is not None and self.services.core.is_past(deadline):
            settled = self._past_deadline(awaiting, from_node, pending) or self._answered(scope, started)
            if settled is not None:
                return settled
            pending = self._pending(from_node)  # a question landed meanwhile
        data = {
            "status": "pending",
            "pending": [_question(i) for i in pending],
            "waited_s": self._waited(started),
            "deadline": deadline,
            "await_id": result.interaction_id,
        }
        text = (
            f"still waiting for {len(pending)} answer(s) after {data['waited_s']}s (deadline {deadline}). "
            "Keep working on what does not depend on them, or call await_answers again."
        )
        return Outcome(data, text)

    def await_answers(self, args: AwaitArgs) -> Outcome:
        from baton.contracts.questions import AwaitRequest

        scope = AwaitRequest.model_validate({**_fields(args, without=("from_node",)), "from": args.from_node})
        return self._await(scope, self.policy.monotonic())

    def ask_user(self, args: AskUserArgs) -> Outcome:
        started = self.policy.monotonic()
        question_id, node, declared = self.continued_question(args) if args.question_id else self.posted_question(args)
        # A declared default is the answer at the deadline: the wait takes it then (rather than timing out).
        from baton.contracts.questions import AwaitRequest

        on_timeout = USE_QUESTION_DEFAULTS if declared is not None and declared.default else "fail"
        outcome = self._await(
            AwaitRequest(from_=node, timeout_seconds=args.timeout_seconds, on_timeout=on_timeout), started
        )
        return self._one_question(outcome, question_id)

    def continued_question(self, args: AskUserArgs) -> tuple[str, str, Ladder | None]:
        """The question an earlier ask_user posted: its id, its own node and its declared ladder."""
        question = self.services.core.store.get_interaction(self.run_id, args.question_id or "")
        if question is None or question.request.kind != "question":
            raise NotFoundError(
                f"question {args.question_id} not found in run {self.run_id}",
                details={"field": "question_id", "question_id": args.question_id},
            )
        if not question.request.node.startswith(ASK_USER_NODE_PREFIX):
            raise ValidationFailedError(
                "question_id names a question ask_user_async posted; collect it with await_answers",
                details={"field": "question_id"},
            )
        return question.interaction_id, question.request.node, question.request.ladder

    def posted_question(self, args: AskUserArgs) -> tuple[str, str, Ladder | None]:
        """A new question on its own node; with a ladder, its deadline is the call's timeout_seconds."""
        if args.question is None:
            raise ValidationFailedError(
                "question is required (or question_id to keep waiting)", details={"field": "question"}
            )
        from baton.contracts.questions import AskRequest

        node = ASK_USER_NODE_PREFIX + self.services.core.ids.new_id()
        ladder = args.ladder()
        # With a ladder the question's own deadline is the call's: its steps and default count to it.
        timeout_seconds = args.timeout_seconds if ladder is not None else None
        asked = {**_fields(args, without=("question_id",)), "node": node, "timeout_seconds": timeout_seconds}
        request = AskRequest.model_validate(asked)
        posted = self.services.questions.ask(self.run_id, request, caller=self.caller.principal)
        return posted.interaction_id, node, ladder

    def _one_question(self, outcome: Outcome, question_id: str) -> Outcome:
        data = {"question_id": question_id, **outcome.data}
        if data["status"] == "answered":
            answer = next((a["answer"] for a in data.pop("answers") if a["interaction_id"] == question_id), None)
            stored = self.services.core.store.get_interaction(self.run_id, question_id)
            if stored is not None and stored.state.reason == TIMED_OUT_DEFAULT:  # nobody answered
                data = {**data, "answer": answer, "outcome": TIMED_OUT_DEFAULT}
                return Outcome(data, f"nobody answered by the deadline: your declared default {answer!r} was taken")
            return Outcome({**data, "answer": answer}, f"answered: {answer!r}")
        if data["status"] == "pending":
            data.pop("pending", None)
            text = (
                f"not answered yet after {data['waited_s']}s (deadline {data['deadline']}). Call ask_user again "
                f'with {{"question_id": "{question_id}"}} to keep waiting; it is not asked twice.'
            )
            return Outcome(data, text)
        return Outcome(data, outcome.text)

    def drain_messages(self, args: DrainArgs) -> Outcome:
        messages = self.services.questions.drain(self.run_id, args.node)
        views = [{"message_id": m.message_id, "interaction_id": m.interaction_id, "text": m.text} for m in messages]
        text = f"{len(views)} message(s) for node {args.node}" + ("" if views else "; nothing new")
        return Outcome({"node": args.node, "messages": views}, text)

    # ---- interrupts ----------------------------------------------------------------------------
    def _interrupts(self) -> InterruptService:
        from baton.services.interrupts import InterruptService

        return InterruptService(self.services.core, sleep=self.policy.sleep, monotonic=self.policy.monotonic)

    def interrupt(self, args: InterruptArgs) -> Outcome:
        from baton.domain.interrupt_spec import InterruptSpec

        started = self.policy.monotonic()
        # The rest by name (tests/unit/test_mcp_interrupt_args.py: none is lost): the flat ladder is the spec's
        # `ladder`, the deadline's seconds its `timeout_ms`, the run its session.
        flat = ("timeout_seconds", *LadderFields.model_fields)
        asked = {"session_id": self.run_id, "timeout_ms": args.timeout_seconds * 1000, "ladder": args.ladder()}
        spec = InterruptSpec.model_validate({**_fields(args, without=flat), **asked})
        created, _ = self._interrupts().create(spec, caller=self.caller.principal)
        return self._wait_interrupt(created.interaction_id, started)

    def get_interrupt(self, args: GetInterruptArgs) -> Outcome:
        return self._wait_interrupt(args.interrupt_id, self.policy.monotonic())

    def _wait_interrupt(self, interrupt_id: str, started: float) -> Outcome:
        service = self._interrupts()
        found = service.get(interrupt_id)
        if found.run_id != self.run_id:
            raise ForbiddenError(
                f"interrupt {interrupt_id} belongs to another run; this connection is bound to run {self.run_id}",
                details={"field": "interrupt_id", "run_id": self.run_id},
            )
        if found.state.status == "pending":
            found = service.get(interrupt_id, wait_seconds=self._budget(started, found.expires_at))
        from baton.contracts import InterruptView

        view = InterruptView.of(found)
        base = {"interrupt_id": interrupt_id, "status": view.status}
        if view.status == "answered" and view.outcome:  # nobody answered: the declared default was taken
            data = {**base, "value": view.value, "state": view.edited_state, "outcome": view.outcome}
            return Outcome(data, f"nobody answered by the deadline: your declared default {view.value!r} was taken")
        if view.status == "answered":
            data = {**base, "value": view.value, "state": view.edited_state, "resolved_by": view.resolved_by}
            return Outcome(data, f"resolved by {view.resolved_by}: value {view.value!r}; use the returned state")
        if view.status == "cancelled":
            data = {**base, "reason": view.reason, "timed_out": view.timed_out}
            why = "its deadline passed" if view.timed_out else f"reason: {view.reason}"
            return Outcome(data, f"the interrupt was cancelled ({why}); do not retry it blindly")
        data = {**base, "waited_s": self._waited(started), "deadline": view.expires_at}
        text = (
            f"not resolved yet after {data['waited_s']}s (deadline {view.expires_at}); keep working or call "
            f'get_interrupt with {{"interrupt_id": "{interrupt_id}"}} again'
        )
        return Outcome(data, text)
