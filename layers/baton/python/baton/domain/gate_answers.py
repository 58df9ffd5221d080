"""An await gate's answers carried on its wait, so the last answer sends the gate's output with no read of
the scope (docs/architecture.md, "The answer path, call by call").

A gate's output lists every answered question in its scope, and answered questions are not in the run's
snapshot (`snapshot_run` reads only the run's open part): before, the last answer read every `INT#` item
of the run after its write, a read that grew with the run's history. Now each answer to a question in a
parked gate's scope writes its entry onto that gate's wait in its deciding transaction (`CarryAnswer`:
the same Update that checks the wait is still open), and the park merges what was answered before it:

- a park stores its wait "filling"; its re-check reads the scope after the wait and the scope bump are
  written, so every answer is either in that read or saw the wait and carried itself (an answer that read
  the run before the park is refused by the bump and reads again); the merge makes the carry "complete";
- the answer that leaves no question of a gate's scope pending sends the gate's output from the carried
  answers and its own only if the carry was complete when read and is unchanged at its write
  (`seen_version`), every question the gate named at its park is among them, and no question was asked
  on the run since its read (`ScopeUnchanged.asked`): a failed guard reads again and decides again.
  Otherwise its release reads the scope after its write, as before; so does every wait stored before
  waits carried answers (carry None), and one whose carry would pass CARRY_LIMIT_BYTES ("off").

Pure rules: the guards and merges they return are written by the services (`question_answers`,
`await_gates`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.contracts.questions import CollectedAnswer
from baton.domain.questions import in_scope
from baton.ports import CarryAnswer, ScopeUnchanged, StillPending, WaitStillOpen

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.models import Interaction, ParkedWait
    from baton.ports import Guard, RunSnapshot

# Of an item's 400 KB: the token, the scope (a ladder) and the names it holds up keep the rest, with
# room for answers carried at once by racing writers that each read the size before the other's.
CARRY_LIMIT_BYTES = 192 * 1024
MERGE_KEYS = 50  # entries per merge Update (its expression stays far under DynamoDB's 4 KB)
CARRYING = ("filling", "complete")
MAX_PENDING_GUARDS = 50  # other pending questions checked in the answer's write; more: one read after it


def entry_of(question: Interaction, answer: Any) -> str:
    """The question's entry in its gate's output (and when it was asked, for the output's order)."""
    entry = {
        "interaction_id": question.interaction_id,
        "node": question.request.node,
        "question": question.request.prompt,
        "answer": answer,
        "created_at": question.created_at,
    }
    return json.dumps(entry, separators=(",", ":"))


def _fits(wait: ParkedWait, entry: str) -> bool:
    return wait.carried_bytes + len(entry.encode()) <= CARRY_LIMIT_BYTES


def releasable(wait: ParkedWait, question: Interaction, answer: Any) -> bool:
    """Does what `wait` carries (as read), with `question`'s answer, give the gate's whole output? (The
    caller has seen no other question of the scope pending; the write's guards keep that true.)"""
    if wait.carry != "complete" or not _fits(wait, entry_of(question, answer)):
        return False
    return all(iid in wait.answers or iid == question.interaction_id for iid in wait.interaction_ids)


def open_guard(wait: ParkedWait, question: Interaction, answer: Any, *, now: str, deciding: bool) -> Guard:
    """The guard an answer's write holds on a gate of its scope: the wait still open before its deadline;
    on a wait that carries answers, the answer carried too (`deciding`: only onto the answers read)."""
    if wait.carry not in CARRYING:
        return WaitStillOpen(wait, now)
    return _carry(wait, question, answer, now, deciding=deciding)


def carried_by(waits: Sequence[ParkedWait], question: Interaction, answer: Any) -> list[Guard]:
    """An answer that holds no gate open (a default taken at a closing gate's deadline) still carries
    itself onto the other parked waits of its scope, so their carried answers stay whole."""
    return [_carry(w, question, answer, None, deciding=False) for w in waits if w.carry in CARRYING]


def _carry(wait: ParkedWait, question: Interaction, answer: Any, now: str | None, *, deciding: bool) -> CarryAnswer:
    """`question`'s answer carried onto `wait` (None: too large, the wait stops carrying)."""
    entry = entry_of(question, answer)
    fits = _fits(wait, entry)
    return CarryAnswer(
        wait=wait,
        now=now,
        interaction_id=question.interaction_id,
        entry=entry if fits else None,
        seen_version=wait.carry_version if deciding and fits else None,
    )


def output(wait: ParkedWait, question: Interaction, answer: Any) -> list[CollectedAnswer]:
    """The gate's answers from what `wait` carried and `question`'s answer, oldest question first."""
    entries = [json.loads(v) for k, v in wait.answers.items() if k != question.interaction_id]
    entries.append(json.loads(entry_of(question, answer)))
    entries.sort(key=lambda e: (e["created_at"], e["interaction_id"]))
    return [CollectedAnswer.model_validate(e) for e in entries]


def merges_at_park(wait: ParkedWait, answered: list[Interaction]) -> list[tuple[dict[str, str], str, int]]:
    """A park's re-check, after reading the scope: the merges (entries, carry, bytes added) of its answered
    questions into the wait's carried answers, in order; the last makes the carry complete ("off" and
    nothing merged past the limit). None unless the wait is filling."""
    if wait.carry != "filling":
        return []
    entries = {i.interaction_id: entry_of(i, i.state.answer) for i in answered}
    if wait.carried_bytes + sum(len(e.encode()) for e in entries.values()) > CARRY_LIMIT_BYTES:
        return [({}, "off", 0)]
    items = list(entries.items())
    chunks = [items[n : n + MERGE_KEYS] for n in range(0, len(items), MERGE_KEYS)] or [[]]
    return [
        (dict(chunk), "complete" if n == len(chunks) - 1 else "filling", sum(len(e.encode()) for _, e in chunk))
        for n, chunk in enumerate(chunks)
    ]


@dataclass(frozen=True)
class AnswerOnGates:
    """An answer's deciding write on the await gates of its scope: what guards it, and what its release
    sends once it is stored."""

    guards: list[Guard]
    ready: list[ParkedWait]  # the gates it leaves with nothing pending (as read): released after the write
    outputs: dict[str, list[CollectedAnswer]]  # of `ready`, the outputs the carried answers give (no read)


def answer_on_gates(
    question: Interaction, answer: Any, gates: list[ParkedWait], snapshot: RunSnapshot, *, now: str
) -> AnswerOnGates:
    """Guarded by every in-scope gate of `gates` still open before its deadline (the answer carried onto
    each), by the run's scope version and by the other in-scope questions still pending (as `snapshot`
    read the run); the gates it leaves with nothing pending are released from their carried answers."""
    others = [
        i
        for i in snapshot.pending
        if i.interaction_id != question.interaction_id and any(in_scope(i, w.from_node) for w in gates)
    ]
    guarded = len(others) <= MAX_PENDING_GUARDS  # more: decided by a read after the write instead
    ready = [w for w in gates if not guarded or not any(in_scope(i, w.from_node) for i in others)]
    outputs = {w.gate: output(w, question, answer) for w in ready if guarded and releasable(w, question, answer)}
    guards: list[Guard] = [open_guard(w, question, answer, now=now, deciding=w.gate in outputs) for w in gates]
    guards.append(ScopeUnchanged(question.run_id, snapshot.scope_version, asked=snapshot.asked if outputs else None))
    if guarded:
        guards += [StillPending(i) for i in others]
    return AnswerOnGates(guards=guards, ready=ready, outputs=outputs)
