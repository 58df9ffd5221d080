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
from baton.errors import (
    ConflictError,
    GoneError,
    NotFoundError,
    PayloadTooLargeError,
    ValidationFailedError,
    winner,
)
from baton.events import (
    AwaitReleased,
    AwaitStarted,
    AwaitTimedOut,
    HumanInputRequested,
    InteractionAnswered,
    RunPaused,
    RunResumed,
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

if TYPE_CHECKING:
    from datetime import datetime

    from baton.services.core import Core

log = logging.getLogger("baton")

MAX_QUESTION_CHARS = 4000  # longer → 413 payload_too_large
MAX_ANSWER_BYTES = 16 * 1024  # the answer, JSON-serialized; longer → 413
MAX_OPTIONS = 50
MAX_OPTION_CHARS = 500
POSTED = "question posted; keep working"
MAP_REFUSAL = (
    "questions cannot be posted from inside a Map iteration: a question set is keyed per (run, node), and a "
    "Map replays ONE node id for every item, so all items would share one inbox. Declare the asking node on "
    "the trunk (before the Map) and fan out below it"
)
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


class QuestionService:
    def __init__(self, core: Core) -> None:
        self.core = core

    # ---- posting --------------------------------------------------------------------------------
    def ask(
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
    ) -> dict[str, Any]:
        """`ask_user_async`: store a pending question for `node`, publish it, return at once.

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
        free_text = allow_free_text if allow_free_text is not None else not options
        if not options and not free_text:
            raise ValidationFailedError(
                "a question with no options must allow free text (nothing could answer it)",
                details={"path": "allow_free_text"},
            )
        core = self.core
        run = core.ensure_run(run_id)
        if run.status in TERMINAL_RUN_STATES:
            raise ConflictError(
                f"run {run_id} is {run.status}; it can no longer ask questions",
                details={"run_id": run_id, "status": run.status},
            )
        interaction = Interaction(
            interaction_id=core.ids.new_id(),
            run_id=run_id,
            created_at=core.now(),
            request=QuestionRequest(
                node=node,
                prompt=question,
                options=options or None,
                allow_free_text=free_text,
                notify=notify or ["console"],
                is_async=True,
                asked_by=caller,
            ),
        )
        core.store.put_interaction(interaction)
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
        return {
            "interaction_id": interaction.interaction_id,
            "run_id": run_id,
            "node": node,
            "status": "pending",
            "message": POSTED,
        }

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
        self.core.require_run(run_id)
        return self.core.store.list_run_interactions(run_id, kind="question", status="pending")

    def _get_question(self, run_id: str, interaction_id: str) -> Interaction:
        found = self.core.store.get_interaction(run_id, interaction_id)
        if found is None or found.request.kind != "question":
            raise NotFoundError(
                f"question {interaction_id} not found in run {run_id}",
                details={"run_id": run_id, "interaction_id": interaction_id},
            )
        return found

    # ---- answering ------------------------------------------------------------------------------
    def answer(self, run_id: str, interaction_id: str, answer: Any, *, caller: str) -> dict[str, Any]:
        """Store the answer (conditional write), queue it for the asking node, release ready gates."""
        core = self.core
        run = core.require_run(run_id)
        question = self._get_question(run_id, interaction_id)
        self._check_answer(question, answer)
        if question.state.status != "pending":
            raise self._already(question)
        self._refuse_after_gate_deadline(question, answer, caller)
        if run.status in TERMINAL_RUN_STATES and run.hosted:
            raise GoneError(
                f"run {run_id} is {run.status}; nothing is waiting for this answer",
                details={"run_id": run_id, "status": run.status},
            )
        # The answer, its message for the asking node and its event: one transaction, all or nothing.
        message = Message(
            message_id=core.ids.new_id(),
            run_id=run_id,
            node=question.request.node,
            text=message_text(question, answer),
            created_at=core.now(),
            interaction_id=interaction_id,
        )
        event = core.new_event(
            run_id,
            InteractionAnswered(
                interaction_id=interaction_id,
                node=question.request.node,
                kind="question",
                answer=answer,
                answer_text=answer_text(answer),
                by=caller,
                is_async=True,
            ),
        )
        try:
            answered = core.store.transition_interaction(
                question,
                status_of(question.state, "answered", answer=answer, by=caller, at=core.now()),
                with_records=[message, event],
            )
        except ConflictError:
            current = core.store.get_interaction(run_id, interaction_id)
            raise self._already(current or question) from None
        released = self.release_ready(run_id)
        return {
            "interaction_id": interaction_id,
            "node": answered.request.node,
            "status": "answered",
            "queued": True,
            "resumed": bool(released),
            "released": released,
        }

    def _refuse_after_gate_deadline(self, question: Interaction, answer: Any, caller: str) -> None:
        """A question an await gate waits for is answered under that gate's deadline: after it, a 410
        and the answer kept as late (the gate is ended by Baton, its run fails with what was missing)."""
        for wait in self.core.store.list_run_waits(question.run_id):
            if wait.kind == "await" and wait.status != "released" and _in_scope(question, wait.scope.get("from")):
                self.core.refuse_if_late(question, answer, caller=caller, deadline=wait.deadline)

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
        pending: list[Interaction] = []
        answers: list[dict[str, Any]] = []
        for i in self.core.store.list_run_interactions(run_id, kind="question"):
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
    ) -> dict[str, Any]:
        """The gate's waitForTaskToken Lambda: park the token, then re-check the store.

        Inside a Map iteration the gate name is made per item (`<gate>-<map_item>`), so each branch parks
        its own token and is released on its own. Idempotent: a retried invoke (same token) finds its
        wait, records nothing again and only re-checks the store.
        """
        if map_item is not None:  # the payload checked the gate's name; the per-item name must hold too
            gate = check_gate_name(f"{gate}-{map_item}")
        core = self.core
        core.ensure_run(run_id)
        again = core.parked_again(run_id, gate, token)
        if again is not None:
            released = again.status == "released" or self._release_if_ready(run_id, gate, from_node)
            return {"parked": True, "gate": gate, "released": released, "pending": again.interaction_ids}
        pending, answered = self._scope(run_id, from_node)
        warning = _never_asked(gate, from_node) if from_node and not pending and not answered else None
        core.store.put_wait(
            ParkedWait(
                run_id=run_id,
                gate=gate,
                task_token=token,
                kind="await",
                interaction_ids=[i.interaction_id for i in pending],
                scope={"from": from_node or None, "timeout_seconds": timeout_seconds},
                parked_at=core.now(),
                deadline=core.deadline_of(timeout_seconds, entered_at),
            )
        )
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
        if pending:
            core.set_run_status(run_id, "paused_waiting_human", allowed_from={"created", "running"})
        # The re-check: anything answered between our read above and the park is seen here.
        released = self._release_if_ready(run_id, gate, from_node)
        return {"parked": True, "gate": gate, "released": released, "pending": [i.interaction_id for i in pending]}

    def _release_if_ready(self, run_id: str, gate: str, from_node: str | None) -> bool:
        pending, answers = self._scope(run_id, from_node)
        if pending:
            return False
        try:
            resumed = self.core.release_gate(run_id, gate, {"answers": answers, "gate": gate, "from": from_node})
        except GoneError:
            return False  # the gate timed out first; its timeout handler reports what was missing
        if resumed:
            self.core.record(run_id, AwaitReleased(gate=gate, answers=len(answers), from_node=from_node))
        return resumed

    def release_ready(self, run_id: str) -> list[str]:
        """Release every parked await gate of the run whose scope is fully answered; complete the tool
        form's pending `await` interactions likewise. Returns the released gates."""
        released = []
        for wait in self.core.store.list_run_waits(run_id):
            if wait.kind != "await" or wait.status != "parked":
                continue
            try:
                if self._release_if_ready(run_id, wait.gate, wait.scope.get("from")):
                    released.append(wait.gate)
            except Exception:  # a failed send loses nothing: the answer is stored, the reconciler retries
                log.exception("await gate release failed", extra={"run_id": run_id, "gate": wait.gate})
        for awaiting in self.core.store.list_run_interactions(run_id, kind="await", status="pending"):
            if self._complete_tool_await(awaiting):
                released.append(f"tool:{awaiting.interaction_id}")
        return released

    def record_gate_timeout(self, run_id: str, gate: str, map_item: int | str | None = None) -> dict[str, Any]:
        """The gate's Catch on States.Timeout: list the unanswered questions in the event and the cause."""
        core = self.core
        gate = f"{gate}-{map_item}" if map_item is not None else gate
        wait = core.store.get_wait(run_id, gate)
        scope = wait.scope if wait else {}
        from_node = scope.get("from")
        if wait is not None and wait.status == "parked":
            core.store.release_wait(wait, "timed_out")
        pending, _ = self._scope(run_id, from_node)
        unanswered = [_unanswered(i) for i in pending]
        listed = "; ".join(f"{u.interaction_id} (node {u.node}): {u.question!r}" for u in unanswered)
        seconds = scope.get("timeout_seconds")
        where = f"await gate '{gate}'" + (f" (from '{from_node}')" if from_node else " (whole run)")
        cause = f"{where} timed out" + (f" after {seconds}s" if seconds else "") + f"; unanswered: {listed or 'none'}"
        core.record(run_id, AwaitTimedOut(gate=gate, from_node=from_node, unanswered=unanswered, cause=cause))
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
    ) -> tuple[bool, dict[str, Any]]:
        """`await_answers` as a tool. (True, answers) when nothing in scope is pending; otherwise
        (False, pending ids) with the run marked paused_waiting_human and an `await` interaction that
        the last answer completes. Calling again while waiting reuses that interaction."""
        if map_item is not None:
            raise ValidationFailedError(
                MAP_AWAIT_REFUSAL, details={"reason": "inside_map_iteration", "map_item": map_item}
            )
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
                ),
            )
            core.store.put_interaction(awaiting)
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
        """The reconciler, at a parked await gate's deadline: a scope answered in time is left to its
        release; otherwise the task fails with DEADLINE_ERROR (the gate's Catch lists what is missing)."""
        pending, _ = self._scope(wait.run_id, wait.scope.get("from"))
        if not pending:
            return False
        listed = ", ".join(i.interaction_id for i in pending)
        cause = f"await gate '{wait.gate}' passed its deadline {wait.deadline}; unanswered: {listed}"
        return self.core.fail_at_deadline(wait, cause)

    def reconcile_tool_awaits(self) -> tuple[list[dict[str, str]], list[str]]:
        """Complete tool-form awaits whose questions are answered; time out those past their expiry."""
        core = self.core
        released: list[dict[str, str]] = []
        timed_out: list[str] = []
        now = core.now()
        for awaiting in core.store.list_pending("await"):
            if self._complete_tool_await(awaiting):
                released.append({"run_id": awaiting.run_id, "gate": f"tool:{awaiting.interaction_id}"})
            elif awaiting.expires_at and awaiting.expires_at <= now:
                pending, _ = self._scope(awaiting.run_id, awaiting.request_as(AwaitToolRequest).from_node)
                try:
                    core.store.transition_interaction(
                        awaiting, status_of(awaiting.state, "timed_out", reason="timeout")
                    )
                except ConflictError:
                    continue
                core.record(
                    awaiting.run_id,
                    AwaitTimedOut(
                        gate="tool",
                        interaction_id=awaiting.interaction_id,
                        unanswered=[_unanswered(i) for i in pending],
                    ),
                )
                timed_out.append(awaiting.interaction_id)
        return released, timed_out
