"""Async questions and await gates: ask, keep working, sync later.

- `ask` stores a pending `question` interaction and returns at once; `answer` stores the answer by a
  conditional write (a second answer is a 409 carrying the winner), queues it as a message for the
  asking node, then releases every parked await gate of the run whose scope is now fully answered.
- An await gate (`statemachines/await_answers.asl.json`, or the Task state of `baton.workflows.gate_states`) parks
  its task token as WAIT#<gate> with scope {"from": node | None}, then RE-CHECKS the store: questions
  answered before it parked release it at once. The reconciler releases any parked gate whose scope is
  already answered (a send that failed after the answer was stored). Every release goes through
  `Core.release_gate`, whose conditional release makes a second sender a no-op: no ordering loses a
  resume and none resumes twice.
- The tool form (`await_tool`) never blocks: all answered → the answers; otherwise an `await`
  interaction lists the pending ids and the run is marked `paused_waiting_human`; answering the last
  question completes it and puts the run back to `running`.

The predicate everywhere is the same, level-triggered and store-backed: "no pending `question` in scope"
(scope = one node's questions, or the whole run when `from` is empty). That shared predicate (`_scope`)
is why questions and both await forms live in one module of over 400 lines.

Names, run ids and timeouts are checked at the door (the API's request models, the gates' payload
models, with `baton.domain.fields`); the rules here are the domain's (options, sizes, Map iterations).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from baton.domain.fields import check_gate_name
from baton.domain.ladder import TIMED_OUT_DEFAULT, USE_QUESTION_DEFAULTS, AnswerCheck
from baton.errors import (
    ConflictError,
    GoneError,
    NotFoundError,
    PayloadTooLargeError,
    ValidationFailedError,
    winner,
)
from baton.events import (
    AnswerLate,
    AwaitReleased,
    AwaitStarted,
    AwaitTimedOut,
    HumanInputRequested,
    InteractionAnswered,
    RunPaused,
    RunResumed,
    TimedOutDefault,
    UnansweredQuestion,
)
from baton.models import (
    TERMINAL_RUN_STATES,
    AwaitToolRequest,
    Interaction,
    Message,
    ParkedWait,
    QuestionRequest,
    status_of,
)
from baton.ports import GuardFailedError, ScopeUnchanged, StillPending
from baton.services import gate_answers
from baton.services.answer_outcomes import SendFailedError, closed_error, delivery_of
from baton.services.approvals import ApprovalService, Voter, approval_view
from baton.services.at_deadline import end_at_deadline
from baton.services.deadlines import arm_interaction, arm_tool_await, park_wait, wait_ladder

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from baton.domain.approval import ApprovalPolicy
    from baton.domain.ladder import Ladder
    from baton.models import Event
    from baton.ports import Guard, RunSnapshot
    from baton.services.approvals import Decided
    from baton.services.core import Core

log = logging.getLogger("baton")

MAX_QUESTION_CHARS = 4000  # longer → 413 payload_too_large
MAX_ANSWER_BYTES = 16 * 1024  # the answer, JSON-serialized; longer → 413
MAX_OPTIONS = 50
MAX_OPTION_CHARS = 500
ANSWER_ATTEMPTS = 5  # an answer whose guard failed (the run changed under it) reads again and decides again
MAX_PENDING_GUARDS = 50  # other pending questions checked in the answer's write; more: one read after it
POSTED = "question posted; keep working"
MAP_REFUSAL = (
    "questions cannot be posted from inside a Map iteration: a question set is keyed per (run, node), and a "
    "Map replays ONE node id for every item, so all items would share one inbox. Declare the asking node on "
    "the trunk (before the Map) and fan out below it"
)
PAUSE_KINDS = frozenset({"ask", "interrupt", "review"})  # a person's pause: its node asks no async questions
MAP_AWAIT_REFUSAL = (
    "the await_answers tool cannot be called from inside a Map iteration: a pause by the tool is run-global. "
    "Put an await gate Task state (per-item gate name) in the Map's ItemProcessor instead"
)


def answer_text(answer: Any) -> str:
    """Strings as they are; anything else as compact JSON."""
    return answer if isinstance(answer, str) else json.dumps(answer, separators=(",", ":"), sort_keys=True)


def message_text(interaction: Interaction, answer: Any) -> str:
    question = interaction.request.prompt
    return f'[Answer to question {interaction.interaction_id}] Q: "{question}" — A: {answer_text(answer)}'


def _is_empty(answer: Any) -> bool:
    if answer is None:
        return True
    if isinstance(answer, str):
        return not answer.strip()
    return isinstance(answer, dict | list) and not answer


def _unanswered(i: Interaction) -> UnansweredQuestion:
    return UnansweredQuestion(interaction_id=i.interaction_id, node=i.request.node, question=i.request.prompt)


def _never_asked(gate: str, from_node: str) -> str:
    """C242 at run time (`baton check` finds it in ASL): said loudly, in the log and on the event."""
    warning = (
        f"await gate '{gate}' waits on node '{from_node}', which has asked nothing in this run (C242): it "
        "releases at once with no answers. Is `from` the node that posts the questions?"
    )
    log.warning(warning)
    return warning


def _in_scope(interaction: Interaction, from_node: str | None) -> bool:
    return interaction.request.kind == "question" and (not from_node or interaction.request.node == from_node)


def _split(questions: list[Interaction], from_node: str | None) -> tuple[list[Interaction], list[dict[str, Any]]]:
    """(pending questions, collected answers) of `questions` in scope, in their order."""
    pending: list[Interaction] = []
    answers: list[dict[str, Any]] = []
    for i in questions:
        if not _in_scope(i, from_node):
            continue
        if i.state.status == "pending":
            pending.append(i)
        elif i.state.status == "answered":
            answers.append(
                {
                    "interaction_id": i.interaction_id,
                    "node": i.request.node,
                    "question": i.request.prompt,
                    "answer": i.state.answer,
                }
            )
    return pending, answers


class QuestionService:
    def __init__(self, core: Core) -> None:
        self.core = core
        self.approvals = ApprovalService(core)

    # ---- posting --------------------------------------------------------------------------------
    def ask(  # noqa: PLR0913 - the API's AskRequest, field by field (the quorum policy made it nine)
        self,
        run_id: str,
        *,
        node: str,
        question: str,
        caller: str,
        options: list[str] | None = None,
        allow_free_text: bool | None = None,
        map_item: int | str | None = None,
        notify: list[str] | None = None,
        approval: ApprovalPolicy | None = None,
        timeout_seconds: int | None = None,
        ladder: Ladder | None = None,
    ) -> dict[str, Any]:
        """`ask_user_async`: store a pending question for `node`, publish it, return at once.

        A `ladder` (`baton.domain.ladder`) needs the question's own `timeout_seconds` (its steps count
        from the post to `expires_at`; 422 without): reminders and escalations about this question, and
        a declared default taken at its deadline (`take_default`). Without a default the question stays
        open at its deadline: the await gate waiting on it ends it with its own timeout, as today.

        With `approval` it is a quorum pause (`baton/domain/approval.py`): each answer is a vote, the
        question is answered when the quorum (or the rejection rule) is met, and `requested_by` (the
        hosted run's starter, else the asker) may not vote.

        `allow_free_text` defaults to True without options and False with them. `map_item` is the
        caller's `$$.Map.Item.Index` when it runs inside a Map iteration: such a post is refused (422).
        """
        if map_item is not None:
            raise ValidationFailedError(MAP_REFUSAL, details={"reason": "inside_map_iteration", "map_item": map_item})
        if not question.strip():
            raise ValidationFailedError("question must not be empty", details={"path": "question"})
        if len(question) > MAX_QUESTION_CHARS:
            raise PayloadTooLargeError(
                f"question is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}",
                details={"size": len(question), "limit": MAX_QUESTION_CHARS},
            )
        if options is not None:
            options = self._check_options(options)
        if approval is not None:
            approval.check_options(options)
        self.core.check_notify(notify)
        free_text = allow_free_text if allow_free_text is not None else not options
        if not options and not free_text:
            raise ValidationFailedError(
                "a question with no options must allow free text (nothing could answer it)",
                details={"path": "allow_free_text"},
            )
        if ladder is not None:
            self._check_ladder(ladder, timeout_seconds, options, free_text=free_text, quorum=approval is not None)
        core = self.core
        run = core.ensure_run(run_id)
        if run.status in TERMINAL_RUN_STATES:
            raise ConflictError(
                f"run {run_id} is {run.status}; it can no longer ask questions",
                details={"run_id": run_id, "status": run.status},
            )
        self._refuse_a_pause_node(run_id, node)
        interaction = Interaction(
            interaction_id=core.ids.new_id(),
            run_id=run_id,
            created_at=core.now(),
            expires_at=core.later(timeout_seconds) if timeout_seconds is not None else None,
            request=QuestionRequest(
                node=node,
                prompt=question,
                options=options or None,
                allow_free_text=free_text,
                timeout_seconds=timeout_seconds,
                ladder=ladder,
                notify=notify or ["console"],
                is_async=True,
                asked_by=caller,
                approval=approval,
                requested_by=(run.started_by if run.hosted and run.started_by else caller) if approval else None,
            ),
        )
        core.store.put_interaction(interaction, count_ask=True)  # counted: a gate released unread sees it
        self._mark_awaited(interaction)
        core.record(
            run_id,
            HumanInputRequested(
                interaction_id=interaction.interaction_id,
                node=node,
                kind="question",
                prompt=question,
                options=options or None,
                allow_free_text=free_text,
                is_async=True,
            ),
        )
        core.notify(interaction, "human_input_requested", **{"async": True})
        arm_interaction(core, interaction)
        return {
            "interaction_id": interaction.interaction_id,
            "run_id": run_id,
            "node": node,
            "status": "pending",
            "message": POSTED,
        }

    @staticmethod
    def _check_ladder(
        ladder: Ladder, timeout_seconds: int | None, options: list[str] | None, *, free_text: bool, quorum: bool
    ) -> None:
        """422 before anything is stored: a ladder needs the question's own deadline, and a default must
        be an answer a person could give (a quorum is never met by a default: refused too)."""
        if timeout_seconds is None:
            raise ValidationFailedError(
                "a question's ladder needs the question's own timeout_seconds (its steps and its default "
                "count to that deadline)",
                details={"path": "timeout_seconds"},
            )
        if quorum and ladder.default is not None:
            raise ValidationFailedError(
                "on_timeout.default: a quorum question is answered by votes, never by a default",
                details={"path": "on_timeout.default"},
            )
        ladder.check_for(
            timeout_seconds, answer_is=AnswerCheck(kind="question", options=options, allow_free_text=free_text)
        )

    @staticmethod
    def _check_options(options: list[str]) -> list[str]:
        if len(options) > MAX_OPTIONS:
            raise ValidationFailedError(f"at most {MAX_OPTIONS} options", details={"path": "options"})
        cleaned = []
        for n, option in enumerate(options):
            if not option.strip() or len(option) > MAX_OPTION_CHARS:
                raise ValidationFailedError(
                    f"options[{n}] must be 1-{MAX_OPTION_CHARS} characters", details={"path": f"options.{n}"}
                )
            cleaned.append(option)
        if len(set(cleaned)) != len(cleaned):
            raise ValidationFailedError("options must be distinct", details={"path": "options"})
        return cleaned

    # ---- reading --------------------------------------------------------------------------------
    def pending(self, run_id: str) -> list[Interaction]:
        """The run's pending questions: one consistent read of its open markers (O(pending))."""
        snapshot = self.core.store.snapshot_run(run_id)
        if snapshot.run is None:
            raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
        return [i for i in snapshot.pending if i.request.kind == "question"]

    def approval_of(self, question: Interaction) -> dict[str, Any] | None:
        """A quorum question's count and voters (one Query of its votes); None for any other question."""
        policy = question.request_as(QuestionRequest).approval if question.request.kind == "question" else None
        return approval_view(self.core, question, policy).model_dump(exclude_unset=True) if policy else None

    def _get_question(self, run_id: str, interaction_id: str) -> Interaction:
        found = self.core.store.get_interaction(run_id, interaction_id)
        if found is None or found.request.kind != "question":
            raise NotFoundError(
                f"question {interaction_id} not found in run {run_id}",
                details={"run_id": run_id, "interaction_id": interaction_id},
            )
        return found

    def _refuse_a_pause_node(self, run_id: str, node: str) -> None:
        """C240 at run time (`baton check` finds it in ASL): a node that is a person's pause in this run (a
        blocking ask, an interrupt, a review gate) cannot post async questions: it IS the blocking question."""
        pause = next(
            (
                i
                for i in self.core.store.list_run_interactions(run_id)
                if i.request.kind in PAUSE_KINDS and i.request.node == node
            ),
            None,
        )
        if pause is not None:
            raise ValidationFailedError(
                f"node '{node}' is a person's pause in run {run_id} (its {pause.request.kind} "
                f"{pause.interaction_id}): a human node IS the blocking question and cannot post async "
                "questions (C240); post them from the agent node that runs before it",
                details={
                    "reason": "node_is_a_human_pause",
                    "code": "C240",
                    "node": node,
                    "pause": pause.interaction_id,
                    "kind": pause.request.kind,
                },
            )

    # ---- answering ------------------------------------------------------------------------------
    def answer(
        self,
        run_id: str,
        interaction_id: str,
        answer: Any,
        *,
        caller: str,
        groups: frozenset[str] = frozenset(),
        decided: Decided | None = None,
    ) -> dict[str, Any]:
        """Store the answer (conditional write), queue it for the asking node, release ready gates.

        The critical path (AWS calls before the send, counted in tests/integration/test_call_budgets.py):
        one consistent read of the run's open part (`snapshot_run`: the run, its pending questions and
        tool awaits, its waits), then one transaction that decides the answer: the answer, its message
        and event, guarded by every in-scope await gate's wait being still open before its deadline
        (so an answer can never be accepted while the deadline path fails the gate), by the run's scope
        version (no gate parked in between unseen) and by the other in-scope questions still pending
        (so "not the last one" is decided by the write, with no read after it). The answer is carried
        onto each such gate's wait in the same write, so the last one sends the gate's output from the
        answers the wait carries, with no read (`baton/services/gate_answers.py`; a wait whose carry
        cannot be trusted: one read of the scope's answers after the write, then the send). A guard
        that failed means the run changed under us: read again and decide again.

        A quorum question's answer is a vote (`_vote`); the vote that meets the quorum answers it here
        with `decided` (the agreed answer, its voters, and the tally guard on the write)."""
        for _attempt in range(ANSWER_ATTEMPTS):
            snapshot = self.core.store.snapshot_run(run_id)
            try:
                return self._answer_on(
                    snapshot, run_id, interaction_id, answer, caller=caller, groups=groups, decided=decided
                )
            except GuardFailedError:
                continue
        raise ConflictError(
            f"question {interaction_id} of run {run_id} is changing too fast to answer; send the answer again",
            details={"run_id": run_id, "interaction_id": interaction_id, "reason": "contention"},
        )

    def _answer_on(
        self,
        snapshot: RunSnapshot,
        run_id: str,
        interaction_id: str,
        answer: Any,
        *,
        caller: str,
        groups: frozenset[str],
        decided: Decided | None,
    ) -> dict[str, Any]:
        core = self.core
        run = snapshot.run
        if run is None:
            raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
        question = next((i for i in snapshot.pending if i.interaction_id == interaction_id), None)
        if question is None or question.request.kind != "question":
            question = self._get_question(run_id, interaction_id)  # not pending: only to say why not
        self._check_answer(question, answer)
        policy = question.request_as(QuestionRequest).approval
        if question.state.status != "pending":
            return self._settled(snapshot, question, answer, Voter(caller, groups), quorum=decided is None)
        gates = self._gates_of(question, snapshot.waits, answer, caller)
        if run.status in TERMINAL_RUN_STATES and run.hosted:
            raise GoneError(
                f"run {run_id} is {run.status}; nothing is waiting for this answer",
                details={"run_id": run_id, "status": run.status},
            )
        if policy is not None and decided is None:
            return self._vote(question, policy, answer, Voter(caller, groups))
        others = [
            i
            for i in snapshot.pending
            if i.interaction_id != interaction_id and any(_in_scope(i, w.scope.get("from")) for w in gates)
        ]
        ready = [
            w
            for w in gates
            if len(others) > MAX_PENDING_GUARDS or not any(_in_scope(i, w.scope.get("from")) for i in others)
        ]
        # The gates this answer releases from their carried answers (no read of the scope after the write).
        known = {
            w.gate for w in ready if len(others) <= MAX_PENDING_GUARDS and gate_answers.releasable(w, question, answer)
        }
        now = core.now()
        guards: list[Guard] = [
            gate_answers.open_guard(w, question, answer, now=now, deciding=w.gate in known) for w in gates
        ]
        guards.append(ScopeUnchanged(run_id, snapshot.scope_version, asked=snapshot.asked if known else None))
        if len(others) <= MAX_PENDING_GUARDS:  # more: decided by a read after the write instead
            guards += [StillPending(i) for i in others]
        message, event = self._answer_records(question, answer, caller)
        records: list[Message | Event] = [message, event]
        if decided is not None:  # released by a quorum: only while the tally is met, with its event
            guards.append(decided.guard)
            records.append(core.new_event(run_id, decided.event))
        try:
            answered = core.store.transition_interaction(
                question,
                status_of(
                    question.state,
                    "answered",
                    answer=answer,
                    by=caller,
                    at=now,
                    reason=decided.reason if decided else None,
                ),
                with_records=records,
                guards=guards,
                audit_head=snapshot.audit_head,
            )
        except ConflictError:
            current = core.store.get_interaction(run_id, interaction_id) or question
            if self._is_repeat(current, answer, caller):
                return self._repeat(snapshot, current)
            raise self._already(current) from None
        outputs = {w.gate: gate_answers.output(w, question, answer) for w in ready if w.gate in known}
        released, unsent = self._release_gates(run_id, ready, known=outputs, siblings=snapshot.waits)
        return self._after_answer(snapshot, answered, released, unsent)

    def _after_answer(
        self, snapshot: RunSnapshot, answered: Interaction, released: list[str], unsent: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Tool-form awaits the answer completes, and the answer's result (`unsent`: gates whose send
        failed, the reconciler's to send: the delivery is pending)."""
        for awaiting in snapshot.pending:
            if awaiting.request.kind == "await" and self._complete_tool_await(awaiting):
                released.append(f"tool:{awaiting.interaction_id}")
        return {
            "interaction_id": answered.interaction_id,
            "node": answered.request.node,
            "status": "answered",
            "queued": True,
            "resumed": bool(released),
            "released": released,
            "delivery": delivery_of(bool(released), pending=bool(unsent)),
        }

    @staticmethod
    def _is_repeat(current: Interaction, answer: Any, caller: str) -> bool:
        """The stored answer is this very request's (the same caller, the same answer; not a quorum's)."""
        st = current.state
        plain = current.request.kind == "question" and current.request_as(QuestionRequest).approval is None
        return plain and st.status == "answered" and st.answer == answer and st.answered_by == caller

    def _repeat(self, snapshot: RunSnapshot, answered: Interaction) -> dict[str, Any]:
        """A repeat of an accepted answer (a client's retry, a twin request) is answered as the first one
        was, from the stored answer: this is what idempotency needs, with no record of its own. The
        await gates parked on its scope before it was answered count as released once resumed; one still
        parked (the first one's send failed, or is under way) is released now (a conditional release:
        never twice)."""
        at = answered.state.answered_at or ""
        gates = [
            w
            for w in snapshot.waits
            if w.kind == "await" and _in_scope(answered, w.scope.get("from")) and w.parked_at <= at
        ]
        sent, unsent = self._release_gates(answered.run_id, [w for w in gates if w.status in ("parked", "expiring")])
        released = [w.gate for w in gates if w.status == "released" or w.gate in sent]
        return self._after_answer(snapshot, answered, released, unsent)

    def _settled(
        self, snapshot: RunSnapshot, question: Interaction, answer: Any, voter: Voter, *, quorum: bool
    ) -> dict[str, Any]:
        """An answer to a question no longer pending: late (410), a repeat of the accepted answer (its
        200 again), a counted voter's repeat on a quorum question (200: counted once), else the 409."""
        if question.state.status == "timed_out":
            raise self._late(question, answer, voter.operator)
        if question.state.status == "cancelled":  # its run was stopped
            raise closed_error(question)
        self.core.refuse_if_ended(question, answer, caller=voter.operator)  # its default was taken: late
        if self._is_repeat(question, answer, voter.operator):
            return self._repeat(snapshot, question)
        policy = question.request_as(QuestionRequest).approval
        if policy is not None and quorum:
            return self._vote(question, policy, answer, voter)
        raise self._already(question)

    def _vote(self, question: Interaction, policy: ApprovalPolicy, answer: Any, voter: Voter) -> dict[str, Any]:
        """One operator's vote on a quorum question: 403 for the requester or a non-approver; counted
        once per operator (a second vote: 200, `already_counted`); the vote that meets the quorum (or
        the rejection rule) answers the question, exactly once; a vote after that is a 409."""
        requested_by = question.request_as(QuestionRequest).requested_by
        ballot = self.approvals.cast(question, policy, answer, voter, requested_by=requested_by)
        result: dict[str, Any] = {
            "interaction_id": question.interaction_id,
            "node": question.request.node,
            "status": "pending",
            "queued": False,
            "resumed": False,
            "released": [],
        }
        if ballot.decision is not None:
            decided = self.approvals.decided(question, policy, ballot)
            try:
                result = self.answer(
                    question.run_id, question.interaction_id, decided.answer, caller=decided.by, decided=decided
                )
            except ConflictError:  # a concurrent vote that read the same tally released it first
                result["status"] = "answered"
        if ballot.outcome == "closed":
            current = self.core.store.get_interaction(question.run_id, question.interaction_id)
            raise self._already(current or question)
        return result | {"approval": ballot.view(policy).model_dump(exclude_unset=True)}

    def _gates_of(self, question: Interaction, waits: list[ParkedWait], answer: Any, caller: str) -> list[ParkedWait]:
        """The parked await gates waiting on `question`. A question an await gate waits for is answered
        under that gate's deadline: after it (or once the deadline path closed the gate), a 410 and the
        answer kept as late (the gate is ended by Baton, its run fails with what was missing)."""
        gates = []
        for wait in waits:
            if wait.kind != "await" or wait.status == "released" or not _in_scope(question, wait.scope.get("from")):
                continue
            closed = wait.status != "parked"
            self.core.refuse_if_late(
                question, answer, caller=caller, deadline=self.core.now() if closed else wait.deadline
            )
            gates.append(wait)
        return gates

    def _answer_records(self, question: Interaction, answer: Any, caller: str) -> tuple[Message, Event]:
        """The answer's message for the asking node and its event (written with it, all or nothing)."""
        core = self.core
        message = self._message(question, message_text(question, answer))
        event = core.new_event(
            question.run_id,
            InteractionAnswered(
                interaction_id=question.interaction_id,
                node=question.request.node,
                kind="question",
                answer=answer,
                answer_text=answer_text(answer),
                by=caller,
                is_async=True,
            ),
        )
        return message, event

    def _message(self, question: Interaction, text: str) -> Message:
        """The message an answered question leaves in its asking node's queue."""
        return Message(
            message_id=self.core.ids.new_id(),
            run_id=question.run_id,
            node=question.request.node,
            text=text,
            created_at=self.core.now(),
            interaction_id=question.interaction_id,
        )

    def _release_gates(
        self,
        run_id: str,
        gates: list[ParkedWait],
        *,
        known: dict[str, list[dict[str, Any]]] | None = None,
        siblings: list[ParkedWait] | None = None,
    ) -> tuple[list[str], list[str]]:
        """Release each of `gates` whose scope is now fully answered: with its `known` output (from the
        answers its wait carried, `baton/services/gate_answers.py`), else from one read of the run's
        questions for all of them. Returns (released, unsent): a failed send loses nothing (the answer is
        stored, the reconciler sends it), its gate is listed as unsent. `siblings`: the run's waits from the
        caller's snapshot (does another still hold the run?)."""
        if not gates:
            return [], []
        known = known or {}
        unknown = [w for w in gates if w.gate not in known]
        questions = self.core.store.list_run_interactions(run_id, kind="question") if unknown else []
        released: list[str] = []
        unsent: list[str] = []
        for wait in gates:
            if wait.gate in known:
                answers = known[wait.gate]
            else:
                pending, answers = _split(questions, wait.scope.get("from"))
                if pending:
                    continue
            others = None if siblings is None else [w for w in siblings if w.gate not in released]
            try:
                if self._send_release(wait, answers, siblings=others):
                    released.append(wait.gate)
            except SendFailedError:
                unsent.append(wait.gate)
            except Exception:
                log.exception("await gate release failed", extra={"run_id": run_id, "gate": wait.gate})
        return released, unsent

    def take_default(self, run_id: str, interaction_id: str) -> bool:
        """A question's own deadline (its timer, `baton.services.deadlines`), with a declared default: it
        is answered with it (nobody's answer: `answered_by` empty, `timed_out_default`), queued for its
        node like any answer, and the await gates it completes are released. A person's answer accepted
        first wins the conditional write; a gate already closing to answers refuses it (a guard). True
        if this call took the default."""
        core = self.core
        question = core.store.get_interaction(run_id, interaction_id)
        if question is None or question.request.kind != "question" or question.state.status != "pending":
            return False
        gates = [
            w
            for w in core.store.list_run_waits(run_id)
            if w.kind == "await" and w.status == "parked" and _in_scope(question, w.scope.get("from"))
        ]
        if not self._answer_default(question, open_gates=gates):
            return False
        self._release_gates(run_id, gates)  # a failed send: the reconciler's
        for awaiting in core.store.list_run_interactions(run_id, kind="await", status="pending"):
            self._complete_tool_await(awaiting)
        return True

    def _answer_default(
        self, question: Interaction, *, open_gates: Sequence[ParkedWait] = (), carrying: Sequence[ParkedWait] = ()
    ) -> bool:
        """Answer a pending question with its declared default, with its message and `timed_out_default`
        event (one conditional write), guarded by `open_gates` still open, carried onto their waits and
        onto `carrying`'s. False if it declared none or changed first."""
        ladder = question.request.ladder
        if ladder is None or ladder.default is None:
            return False
        core, value = self.core, ladder.default.default
        now = core.now()
        guards = [gate_answers.open_guard(w, question, value, now=now, deciding=False) for w in open_gates]
        guards += gate_answers.carried_by(carrying, question, value)
        message = self._message(
            question, message_text(question, value) + " (nobody answered: the declared default, timed_out_default)"
        )
        event = core.new_event(
            question.run_id,
            TimedOutDefault(
                interaction_id=question.interaction_id,
                node=question.request.node,
                kind="question",
                default=value,
                deadline=question.expires_at or core.now(),
            ),
        )
        answered = status_of(question.state, "answered", answer=value, at=now, reason=TIMED_OUT_DEFAULT)
        try:
            core.store.transition_interaction(question, answered, with_records=[message, event], guards=guards)
        except (ConflictError, GuardFailedError):
            return False
        return True

    def _late(self, question: Interaction, answer: Any, caller: str) -> GoneError:
        """An answer to a question whose gate timed out: kept on the record as late, never delivered."""
        st = question.state
        when = st.answered_at or self.core.now()
        self.core.record(
            question.run_id,
            AnswerLate(
                interaction_id=question.interaction_id,
                node=question.request.node,
                kind="question",
                answer=answer,
                by=caller,
                deadline=when,
            ),
        )
        return GoneError(
            f"question {question.interaction_id} is no longer pending: {st.reason or 'its gate timed out'} at "
            f"{when}; the answer is recorded as late and not delivered",
            details={"reason": "gate_timed_out", "timed_out_at": when, "interaction": question.public()},
        )

    def _time_out_questions(self, pending: list[Interaction], why: str) -> None:
        """The questions a timed-out gate waited on stop being pending: marked timed out, with `why`
        (a conditional write: one answered at the last moment keeps its answer)."""
        for question in pending:
            try:
                self.core.store.transition_interaction(
                    question, status_of(question.state, "timed_out", at=self.core.now(), reason=why)
                )
            except ConflictError:
                continue

    @staticmethod
    def _already(current: Interaction) -> ConflictError:
        status = current.state.status
        return ConflictError(
            f"question {current.interaction_id} is already {status}"
            + (f" (answer: {answer_text(current.state.answer)!r})" if status == "answered" else ""),
            details={
                "answer": current.state.answer,
                "interaction": current.public(),
                "winner": winner(
                    status=status,
                    value=current.state.answer,
                    by=current.state.answered_by,
                    at=current.state.answered_at,
                ),
            },
        )

    @staticmethod
    def _check_answer(question: Interaction, answer: Any) -> None:
        if _is_empty(answer):
            raise ValidationFailedError("answer must not be empty", details={"path": "answer"})
        size = len(json.dumps(answer))
        if size > MAX_ANSWER_BYTES:
            raise PayloadTooLargeError(
                f"answer is {size} bytes; the limit is {MAX_ANSWER_BYTES}",
                details={"size": size, "limit": MAX_ANSWER_BYTES},
            )
        req = question.request
        if req.options and not req.allow_free_text and answer not in req.options:
            raise ValidationFailedError(
                f"answer must be one of the options {req.options} (free text is off for this question)",
                details={"path": "answer", "options": req.options},
            )

    # ---- scope ----------------------------------------------------------------------------------
    def _scope(self, run_id: str, from_node: str | None) -> tuple[list[Interaction], list[dict[str, Any]]]:
        """(pending questions, collected answers) in scope, oldest first."""
        return _split(self.core.store.list_run_interactions(run_id, kind="question"), from_node)

    # ---- the await gate (Step Functions) --------------------------------------------------------
    def park_gate(
        self,
        *,
        run_id: str,
        gate: str,
        token: str,
        timeout_seconds: int,
        from_node: str | None = None,
        map_item: int | str | None = None,
        entered_at: datetime | None = None,
        ladder: Ladder | None = None,
    ) -> dict[str, Any]:
        """The gate's waitForTaskToken Lambda: park the token, then re-check the store.

        A `ladder` reminds and escalates about the scope's still-unanswered questions; its `on_timeout`
        is "fail" or "use_question_defaults" (`end_at_deadline`). Checked here (a bad one fails the task
        with the 422's message; `baton check` finds a literal one first, C261).

        Inside a Map iteration the gate name is made per item (`<gate>-<map_item>`), so each branch parks
        its own token and is released on its own. Idempotent: a retried invoke (same token) finds its
        wait, records nothing again and only re-checks the store.
        """
        if map_item is not None:  # the payload checked the gate's name; the per-item name must hold too
            gate = check_gate_name(f"{gate}-{map_item}")
        core = self.core
        if ladder is not None:
            ladder.check_for(timeout_seconds, answer_is=AnswerCheck(kind="await"))
        core.ensure_run(run_id)
        again = core.parked_again(run_id, gate, token)
        if again is not None:
            parked = again if again.status == "parked" else None
            released = again.status == "released" or self._release_if_ready(run_id, gate, from_node, parked)
            return {"parked": True, "gate": gate, "released": released, "pending": again.interaction_ids}
        pending, answered = self._scope(run_id, from_node)
        warning = _never_asked(gate, from_node) if from_node and not pending and not answered else None
        parked = ParkedWait(
            run_id=run_id,
            gate=gate,
            task_token=token,
            kind="await",
            interaction_ids=[i.interaction_id for i in pending],
            scope={"from": from_node or None, "timeout_seconds": timeout_seconds}
            | ({"ladder": ladder.model_dump(mode="json")} if ladder is not None else {}),
            parked_at=core.now(),
            deadline=core.deadline_of(timeout_seconds, entered_at),
            carry="filling",  # the re-check below merges what was answered before it (gate_answers.py)
        )
        park_wait(core, parked)
        # An answer that read the run before this wait existed is refused by its write (and decides
        # again, seeing the gate); one that landed first is seen by the re-check below.
        core.store.bump_scope(run_id)
        core.record(
            run_id,
            AwaitStarted(
                gate=gate,
                from_node=from_node or None,
                timeout_seconds=timeout_seconds,
                pending=[i.interaction_id for i in pending],
                **({"warning": warning} if warning else {}),
            ),
        )
        if pending and core.set_run_status(run_id, "paused_waiting_human", allowed_from={"created", "running"}):
            core.record(run_id, RunPaused(gate=gate, kind="await", pending=[i.interaction_id for i in pending]))
        # The re-check: anything answered between our read above and the park is seen here.
        released = self._release_if_ready(run_id, gate, from_node, parked)
        if not released:  # asked between our read above and the park: this gate holds it up too
            late, _ = self._scope(run_id, from_node)
            named = {i.interaction_id for i in pending}
            core.store.mark_blocked(run_id, gate, [i.interaction_id for i in late if i.interaction_id not in named])
        return {"parked": True, "gate": gate, "released": released, "pending": [i.interaction_id for i in pending]}

    def _mark_awaited(self, question: Interaction) -> None:
        """A question asked while an await gate of its scope is parked holds that gate up (the inbox shows
        it). Read after the question's write, as the park reads its scope after the wait's: of a question
        and a gate racing, one of the two reads sees the other's write, so one of them marks it."""
        for wait in self.core.store.list_run_waits(question.run_id):
            if wait.kind == "await" and wait.status == "parked" and _in_scope(question, wait.scope.get("from")):
                self.core.store.mark_blocked(question.run_id, wait.gate, [question.interaction_id])
                return

    def _release_if_ready(
        self, run_id: str, gate: str, from_node: str | None, parked: ParkedWait | None = None
    ) -> bool:
        """Release the gate if its scope is answered. Not yet, after a park (`parked`, the wait it
        wrote): what was answered before it is merged into the wait's carried answers, read after the
        wait and its scope bump were written (`baton/services/gate_answers.py`)."""
        questions = self.core.store.list_run_interactions(run_id, kind="question")
        pending, answers = _split(questions, from_node)
        if pending:
            if parked is not None:
                answered = [i for i in questions if _in_scope(i, from_node) and i.state.status == "answered"]
                gate_answers.merge_at_park(self.core.store, parked, answered)
            return False
        wait = self.core.store.get_wait(run_id, gate)
        return wait is not None and self._send_release(wait, answers)

    def _send_release(
        self, wait: ParkedWait, answers: list[dict[str, Any]], *, siblings: list[ParkedWait] | None = None
    ) -> bool:
        """Send the gate's output with the scope's answers; `await_released` is recorded with the release."""
        from_node = wait.scope.get("from")
        try:
            return self.core.release_gate(
                wait.run_id,
                wait.gate,
                {"answers": answers, "gate": wait.gate, "from": from_node},
                wait=wait,
                also=[AwaitReleased(gate=wait.gate, answers=len(answers), from_node=from_node)],
                siblings=siblings,
            )
        except GoneError:
            return False  # the gate timed out first; its timeout handler reports what was missing

    def record_gate_timeout(self, run_id: str, gate: str, map_item: int | str | None = None) -> dict[str, Any]:
        """The gate's Catch on States.Timeout: list the unanswered questions in the event and the cause."""
        core = self.core
        gate = f"{gate}-{map_item}" if map_item is not None else gate
        wait = core.store.get_wait(run_id, gate)
        scope = wait.scope if wait else {}
        from_node = scope.get("from")
        if wait is not None and wait.status in ("parked", "expiring"):
            core.store.release_wait(wait, "timed_out")
        pending, _ = self._scope(run_id, from_node)
        unanswered = [_unanswered(i) for i in pending]
        listed = "; ".join(f"{u.interaction_id} (node {u.node}): {u.question!r}" for u in unanswered)
        seconds = scope.get("timeout_seconds")
        where = f"await gate '{gate}'" + (f" (from '{from_node}')" if from_node else " (whole run)")
        cause = f"{where} timed out" + (f" after {seconds}s" if seconds else "") + f"; unanswered: {listed or 'none'}"
        core.record(run_id, AwaitTimedOut(gate=gate, from_node=from_node, unanswered=unanswered, cause=cause))
        self._time_out_questions(pending, f"await gate '{gate}' timed out")
        if map_item is None:  # a timed-out Map branch fails its item; the Map decides the run's fate
            core.set_run_status(
                run_id, "failed", allowed_from={"created", "running", "paused_waiting_human"}, reason=cause
            )
        return {"cause": cause, "unanswered": [u.model_dump() for u in unanswered]}

    # ---- the tool form --------------------------------------------------------------------------
    def await_tool(
        self,
        run_id: str,
        *,
        timeout_seconds: int,
        caller: str,
        from_node: str | None = None,
        map_item: int | str | None = None,
        ladder: Ladder | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """`await_answers` as a tool. (True, answers) when nothing in scope is pending; otherwise
        (False, pending ids) with the run marked paused_waiting_human and an `await` interaction that
        the last answer completes. Calling again while waiting reuses that interaction (and its ladder:
        remind / escalate about the pending questions, `use_question_defaults` at its expiry)."""
        if map_item is not None:
            raise ValidationFailedError(
                MAP_AWAIT_REFUSAL, details={"reason": "inside_map_iteration", "map_item": map_item}
            )
        if ladder is not None:
            ladder.check_for(timeout_seconds, answer_is=AnswerCheck(kind="await"))
        core = self.core
        core.require_run(run_id)
        pending, answers = self._scope(run_id, from_node)
        if not pending:
            # The last answer may still be on its way to completing this scope's tool await: complete it
            # here too (a conditional write: one of the two does it), so a 200 never leaves the run paused.
            for awaiting in core.store.list_run_interactions(run_id, kind="await", status="pending"):
                if awaiting.request.node == (from_node or "*"):
                    self._complete_tool_await(awaiting)
            self._unpause_if_idle(run_id)
            return True, {"status": "answered", "run_id": run_id, "from": from_node, "answers": answers}
        ids = [i.interaction_id for i in pending]
        scope_key = from_node or "*"
        existing = [
            i
            for i in core.store.list_run_interactions(run_id, kind="await", status="pending")
            if i.request.node == scope_key
        ]
        if existing:
            awaiting = existing[-1]
        else:
            awaiting = Interaction(
                interaction_id=core.ids.new_id(),
                run_id=run_id,
                created_at=core.now(),
                expires_at=core.later(timeout_seconds),
                request=AwaitToolRequest(
                    node=scope_key,
                    prompt=f"waiting for {len(ids)} answer(s)" + (f" of node '{from_node}'" if from_node else ""),
                    timeout_seconds=timeout_seconds,
                    from_node=from_node,
                    pending=ids,
                    by=caller,
                    ladder=ladder,
                ),
            )
            core.store.put_interaction(awaiting)
            arm_tool_await(core, awaiting)
            core.store.bump_scope(run_id)  # as a gate's park: an answer that read before it decides again
            core.record(
                run_id,
                AwaitStarted(
                    gate="tool",
                    interaction_id=awaiting.interaction_id,
                    from_node=from_node,
                    timeout_seconds=timeout_seconds,
                    pending=ids,
                ),
            )
        if core.set_run_status(run_id, "paused_waiting_human", allowed_from={"created", "running"}):
            core.record(run_id, RunPaused(gate="await_answers", kind="await", pending=ids))
        # Answers that landed between our read and our writes (the await may even have been completed
        # before we marked the run paused): complete it now, and never leave the run paused for nothing.
        current = core.store.get_interaction(run_id, awaiting.interaction_id) or awaiting
        if current.state.status != "pending" or self._complete_tool_await(current):
            self._unpause_if_idle(run_id)
            pending, answers = self._scope(run_id, from_node)
            if not pending:
                return True, {"status": "answered", "run_id": run_id, "from": from_node, "answers": answers}
        return False, {
            "status": "pending",
            "run_id": run_id,
            "from": from_node,
            "pending": ids,
            "interaction_id": awaiting.interaction_id,
            "run_status": "paused_waiting_human",
        }

    def _unpause_if_idle(self, run_id: str) -> None:
        """A run marked paused by the tool form goes back to running once nothing waits on a human."""
        run = self.core.store.get_run(run_id)
        if run is None or run.status != "paused_waiting_human":
            return
        if any(w.status == "parked" for w in self.core.store.list_run_waits(run_id)):
            return
        if self.core.store.list_run_interactions(run_id, kind="await", status="pending"):
            return
        if self.core.set_run_status(run_id, "running", allowed_from={"paused_waiting_human"}):
            self.core.record(run_id, RunResumed(gate="await_answers", kind="await"))

    def _complete_tool_await(self, awaiting: Interaction) -> bool:
        from_node = awaiting.request_as(AwaitToolRequest).from_node
        pending, answers = self._scope(awaiting.run_id, from_node)
        if pending:
            return False
        try:
            self.core.store.transition_interaction(
                awaiting, status_of(awaiting.state, "answered", answer=answers, at=self.core.now())
            )
        except ConflictError:
            return False  # another answer completed it
        self.core.record(
            awaiting.run_id, AwaitReleased(gate="tool", interaction_id=awaiting.interaction_id, answers=len(answers))
        )
        if self.core.set_run_status(awaiting.run_id, "running", allowed_from={"paused_waiting_human"}):
            self.core.record(awaiting.run_id, RunResumed(gate="await_answers", kind="await"))
        return True

    # ---- delivery -------------------------------------------------------------------------------
    def drain(self, run_id: str, node: str) -> list[Message]:
        """The agent side: the node's queued messages, oldest first, each delivered exactly once."""
        self.core.require_run(run_id)
        return self.core.store.drain_messages(run_id, node, drained_at=self.core.now())

    # ---- the reconciler -------------------------------------------------------------------------
    def reconcile_wait(self, wait: ParkedWait) -> bool:
        """One parked await gate: released if its scope is answered. True if this call released it."""
        return self._release_if_ready(wait.run_id, wait.gate, wait.scope.get("from"))

    def end_at_deadline(self, wait: ParkedWait) -> bool:
        """At a parked await gate's deadline, the one deadline path (baton.services.at_deadline,
        `AwaitDeadline`): the wait is closed to answers first, then its scope read; everything answered
        before it closed releases the gate with the answers. Otherwise its questions' declared defaults
        (`use_question_defaults`), else the task fails with DEADLINE_ERROR (the gate's Catch lists what is
        missing). True if this call ended (or released) the gate."""
        return end_at_deadline(AwaitDeadline(self), wait) is not None

    def reconcile_tool_awaits(self) -> tuple[list[dict[str, str]], list[str]]:
        """Complete tool-form awaits whose questions are answered; time out those past their expiry."""
        core = self.core
        released: list[dict[str, str]] = []
        timed_out: list[str] = []
        now = core.now()
        for awaiting in core.store.list_pending("await"):
            if self._complete_tool_await(awaiting):
                released.append({"run_id": awaiting.run_id, "gate": f"tool:{awaiting.interaction_id}"})
            elif awaiting.expires_at and awaiting.expires_at <= now and self._time_out_tool_await(awaiting):
                timed_out.append(awaiting.interaction_id)
        return released, timed_out

    def time_out_tool_await(self, run_id: str, interaction_id: str) -> bool:
        """A tool-form await's timer, at its expiry: completed if its scope is answered, else timed out.
        True if this call timed it out."""
        awaiting = self.core.store.get_interaction(run_id, interaction_id)
        if awaiting is None or awaiting.request.kind != "await" or awaiting.state.status != "pending":
            return False
        ladder = awaiting.request.ladder
        if ladder is not None and ladder.on_timeout == USE_QUESTION_DEFAULTS:  # each question's own default
            pending, _ = self._scope(run_id, awaiting.request_as(AwaitToolRequest).from_node)
            for question in pending:
                self.take_default(run_id, question.interaction_id)
            awaiting = self.core.store.get_interaction(run_id, interaction_id) or awaiting
            if awaiting.state.status != "pending":
                return False  # completed by the defaults: not timed out
        return not self._complete_tool_await(awaiting) and self._time_out_tool_await(awaiting)

    def _time_out_tool_await(self, awaiting: Interaction) -> bool:
        """Time out a pending tool-form await: the run is no longer paused for it. Its questions stay
        open (the tool form blocks nobody: the agent may await them again), unlike a gate's."""
        core = self.core
        pending, _ = self._scope(awaiting.run_id, awaiting.request_as(AwaitToolRequest).from_node)
        try:
            core.store.transition_interaction(awaiting, status_of(awaiting.state, "timed_out", reason="timeout"))
        except ConflictError:
            return False
        core.record(
            awaiting.run_id,
            AwaitTimedOut(
                gate="tool", interaction_id=awaiting.interaction_id, unanswered=[_unanswered(i) for i in pending]
            ),
        )
        self._unpause_if_idle(awaiting.run_id)
        return True


class AwaitDeadline:
    """An await gate's `DeadlinePolicy` (baton.services.at_deadline). Closed by a conditional write to
    "expiring" (an answer's write is guarded by the wait being parked, so from here none is accepted; a
    wait found already expiring, a deadline that died midway, goes on from the read); what was stored is
    its scope's answers once no question in it is pending."""

    def __init__(self, questions: QuestionService) -> None:
        self.questions = questions
        self.core = questions.core

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        if wait.status == "parked":
            if not self.core.store.release_wait(wait, "expiring"):
                return None  # released or ended by someone else first
            return wait.model_copy(update={"status": "expiring"})
        return wait if wait.status == "expiring" else None

    def stored(self, wait: ParkedWait) -> list[dict[str, Any]] | None:
        pending, answers = self.questions._scope(wait.run_id, wait.scope.get("from"))
        return None if pending else answers

    def release(self, wait: ParkedWait, stored: list[dict[str, Any]]) -> bool:
        return self.questions._send_release(wait, stored)

    def _defaults_declared(self, wait: ParkedWait) -> bool:
        ladder = wait_ladder(wait)
        return ladder is not None and ladder.on_timeout == USE_QUESTION_DEFAULTS

    def take_default(self, wait: ParkedWait) -> bool:
        """Each pending question's own default (the wait is closed to answers), when the gate declared
        `use_question_defaults`; the other parked gates of its scope carry the answer too."""
        if not self._defaults_declared(wait):
            return False
        pending, _ = self.questions._scope(wait.run_id, wait.scope.get("from"))
        others = [
            w
            for w in self.core.store.list_run_waits(wait.run_id)
            if w.kind == "await" and w.status == "parked" and w.gate != wait.gate
        ]
        for question in pending:
            carrying = [w for w in others if _in_scope(question, w.scope.get("from"))]
            self.questions._answer_default(question, carrying=carrying)
        return bool(pending)

    def time_out(self, wait: ParkedWait) -> bool:
        pending, _ = self.questions._scope(wait.run_id, wait.scope.get("from"))
        if not pending:
            return False
        listed = ", ".join(i.interaction_id for i in pending)
        cause = f"await gate '{wait.gate}' passed its deadline {wait.deadline}; unanswered: {listed}"
        if self._defaults_declared(wait):
            cause += " (no declared default)"
        return self.core.fail_at_deadline(wait, cause)
