"""An async question's own rules, with no port: what may be asked (text, options, free text, not from a
Map iteration, a ladder counting to its own deadline) and what may answer it (non-empty, bounded, one of the
options when free text is off), and the scope both await forms wait on (one node's questions, or the run's:
released once none of it is pending)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.contracts.questions import CollectedAnswer
from baton.domain.channels import refuse_unconfigured
from baton.domain.ladder import AnswerCheck
from baton.errors import ConflictError, GoneError, PayloadTooLargeError, ValidationFailedError
from baton.events import AnswerLate, HumanInputRequested, InteractionAnswered, UnansweredQuestion
from baton.models import TERMINAL_RUN_STATES, QuestionRequest

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.contracts.questions import AskRequest
    from baton.domain.ladder import Ladder
    from baton.models import Interaction, ParkedWait, RunSummary

MAX_QUESTION_CHARS = 4000  # longer → 413 payload_too_large
MAX_ANSWER_BYTES = 16 * 1024  # the answer, JSON-serialized; longer → 413
MAX_OPTIONS = 50
MAX_OPTION_CHARS = 500
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


def message_text(question: Interaction, answer: Any) -> str:
    """The text an answer leaves in its asking node's queue."""
    prompt = question.request.prompt
    return f'[Answer to question {question.interaction_id}] Q: "{prompt}" — A: {answer_text(answer)}'


def question_asked(request: AskRequest, channels: Sequence[str], *, caller: str) -> QuestionRequest:
    """`ask_user_async`'s question as it is stored, checked before anything is (422/413): not from a Map
    item, its text and options, its quorum's options, its channels, its ladder. A quorum's requester (who
    may not vote) is the service's to add, once it has read the run."""
    refuse_in_map(request.map_item, MAP_REFUSAL)
    options, free_text = check_question(request.question, request.options, request.allow_free_text)
    approval, ladder, timeout_seconds = request.approval, request.ladder(), request.timeout_seconds
    if approval is not None:
        approval.check_options(options)
    refuse_unconfigured(request.notify, channels)
    if ladder is not None:
        check_question_ladder(ladder, timeout_seconds, options, free_text=free_text, quorum=approval is not None)
    return QuestionRequest(
        node=request.node,
        prompt=request.question,
        options=options,
        allow_free_text=free_text,
        timeout_seconds=timeout_seconds,
        ladder=ladder,
        notify=request.notify or ["console"],
        is_async=True,
        asked_by=caller,
        approval=approval,
    )


def check_question_ladder(
    ladder: Ladder, timeout_seconds: int | None, options: list[str] | None, *, free_text: bool, quorum: bool
) -> None:
    """422 before anything is stored: a ladder counts to the question's own deadline, and its default
    must be an answer a person could give (a quorum is met by votes only)."""
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


def refuse_in_map(map_item: int | str | None, message: str) -> None:
    if map_item is not None:
        raise ValidationFailedError(message, details={"reason": "inside_map_iteration", "map_item": map_item})


def check_question(
    question: str, options: list[str] | None, allow_free_text: bool | None
) -> tuple[list[str] | None, bool]:
    """422/413 before anything is stored; returns (options, free text: by default only without options)."""
    if not question.strip():
        raise ValidationFailedError("question must not be empty", details={"path": "question"})
    if len(question) > MAX_QUESTION_CHARS:
        raise PayloadTooLargeError(
            f"question is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}",
            details={"size": len(question), "limit": MAX_QUESTION_CHARS},
        )
    if options is not None:
        _check_options(options)
    free_text = allow_free_text if allow_free_text is not None else not options
    if not options and not free_text:
        raise ValidationFailedError(
            "a question with no options must allow free text (nothing could answer it)",
            details={"path": "allow_free_text"},
        )
    return options or None, free_text


def _check_options(options: list[str]) -> None:
    if len(options) > MAX_OPTIONS:
        raise ValidationFailedError(f"at most {MAX_OPTIONS} options", details={"path": "options"})
    for n, option in enumerate(options):
        if not option.strip() or len(option) > MAX_OPTION_CHARS:
            raise ValidationFailedError(
                f"options[{n}] must be 1-{MAX_OPTION_CHARS} characters", details={"path": f"options.{n}"}
            )
    if len(set(options)) != len(options):
        raise ValidationFailedError("options must be distinct", details={"path": "options"})


def _is_empty(answer: Any) -> bool:
    if answer is None:
        return True
    if isinstance(answer, str):
        return not answer.strip()
    return isinstance(answer, dict | list) and not answer


def check_answer(answer: Any, options: list[str] | None, *, allow_free_text: bool | None) -> None:
    if _is_empty(answer):
        raise ValidationFailedError("answer must not be empty", details={"path": "answer"})
    size = len(json.dumps(answer))
    if size > MAX_ANSWER_BYTES:
        raise PayloadTooLargeError(
            f"answer is {size} bytes; the limit is {MAX_ANSWER_BYTES}",
            details={"size": size, "limit": MAX_ANSWER_BYTES},
        )
    if options and not allow_free_text and answer not in options:
        raise ValidationFailedError(
            f"answer must be one of the options {options} (free text is off for this question)",
            details={"path": "answer", "options": options},
        )


def unanswered_of(i: Interaction) -> UnansweredQuestion:
    return UnansweredQuestion(interaction_id=i.interaction_id, node=i.request.node, question=i.request.prompt)


def never_asked(gate: str, from_node: str) -> str:
    """C242 at run time (`baton check` finds it in ASL), said on the gate's event and in the log."""
    return (
        f"await gate '{gate}' waits on node '{from_node}', which has asked nothing in this run (C242): it "
        "releases at once with no answers. Is `from` the node that posts the questions?"
    )


def gate_timeout_cause(gate: str, from_node: str | None, seconds: object, unanswered: list[UnansweredQuestion]) -> str:
    """What an await gate's timeout fails its run with: where it waited and what went unanswered."""
    listed = "; ".join(f"{u.interaction_id} (node {u.node}): {u.question!r}" for u in unanswered)
    where = f"await gate '{gate}'" + (f" (from '{from_node}')" if from_node else " (whole run)")
    return f"{where} timed out" + (f" after {seconds}s" if seconds else "") + f"; unanswered: {listed or 'none'}"


def in_scope(interaction: Interaction, from_node: str | None) -> bool:
    return interaction.request.kind == "question" and (not from_node or interaction.request.node == from_node)


def open_gates_of(question: Interaction, waits: Sequence[ParkedWait]) -> list[ParkedWait]:
    """The parked await gates whose scope holds `question`."""
    return [w for w in waits if w.kind == "await" and w.status == "parked" and in_scope(question, w.from_node)]


def split_scope(questions: list[Interaction], from_node: str | None) -> tuple[list[Interaction], list[CollectedAnswer]]:
    """(pending questions, collected answers) of `questions` in scope, in their order."""
    pending: list[Interaction] = []
    answers: list[CollectedAnswer] = []
    for i in questions:
        if not in_scope(i, from_node):
            continue
        if i.state.status == "pending":
            pending.append(i)
        elif i.state.status == "answered":
            answers.append(
                CollectedAnswer(
                    interaction_id=i.interaction_id,
                    node=i.request.node,
                    question=i.request.prompt,
                    answer=i.state.answer,
                )
            )
    return pending, answers


def refuse_a_pause_node(run_id: str, node: str, interactions: Sequence[Interaction]) -> None:
    """C240 at run time (`baton check` finds it in ASL): a person's pause node IS the blocking question."""
    pause = next((i for i in interactions if i.request.kind in PAUSE_KINDS and i.request.node == node), None)
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


def asked_event(question: Interaction) -> HumanInputRequested:
    request = question.request
    return HumanInputRequested(
        interaction_id=question.interaction_id,
        node=request.node,
        kind="question",
        prompt=request.prompt,
        options=request.options,
        allow_free_text=request.allow_free_text,
        is_async=True,
    )


def answered_event(question: Interaction, answer: Any, by: str, via: str | None) -> InteractionAnswered:
    return InteractionAnswered(
        interaction_id=question.interaction_id,
        node=question.request.node,
        kind="question",
        answer=answer,
        answer_text=answer_text(answer),
        by=by,
        is_async=True,
        via=via,
    )


def late_after_gate(question: Interaction, answer: Any, by: str, when: str) -> tuple[AnswerLate, GoneError]:
    """An answer to a question its gate timed out at `when`: the record that keeps it as late, and the 410."""
    late = AnswerLate(
        interaction_id=question.interaction_id,
        node=question.request.node,
        kind="question",
        answer=answer,
        by=by,
        deadline=when,
    )
    gone = GoneError(
        f"question {question.interaction_id} is no longer pending: "
        f"{question.state.reason or 'its gate timed out'} at {when}; the answer is recorded as late and not delivered",
        details={"reason": "gate_timed_out", "timed_out_at": when, "interaction": question.public()},
    )
    return late, gone


def refuse_ended_run(run: RunSummary) -> None:
    if run.status in TERMINAL_RUN_STATES:
        raise ConflictError(
            f"run {run.run_id} is {run.status}; it can no longer ask questions",
            details={"run_id": run.run_id, "status": run.status},
        )
