"""In-memory fakes of the ports in `baton/ports.py`, with the same conditional semantics as the DynamoDB
adapter. For unit tests of the domain; the integration tests run the real adapters on moto."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from baton.contracts.agent_state import AgentStateView, AgentStateWritten
from baton.contracts.away import Away
from baton.domain.approval import Approval, ApprovalTally, MetTally
from baton.domain.audit import EMPTY_HEAD, AuditHead, AuditRecord, AuditTrail, chain, is_decision
from baton.domain.fields import OPEN_RUN_STATES
from baton.errors import ConflictError, NotFoundError, TaskTokenError, already_parked
from baton.models import (
    TERMINAL_RUN_STATES,
    Event,
    Interaction,
    InteractionStatus,
    Message,
    ParkedWait,
    PendingQuery,
    ReviewTurn,
    RunSummary,
)
from baton.pending_query import PendingPage
from baton.ports import (
    PENDING_MARKED_KINDS,
    CarryAnswer,
    FoundInteraction,
    GuardFailedError,
    QuorumMet,
    RunSnapshot,
    ScopeUnchanged,
    WaitStillOpen,
)
from baton.workflows.table import DUE_SK_ATTRIBUTE, due_before, due_keys

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from baton.contracts.push import PushSubscription
    from baton.domain.approval import VoteOutcome
    from baton.ports import Guard


def _refuse_decisions(events: Sequence[Event]) -> None:
    """As DynamoStore: a new interaction's put records no decision (it would be written outside the chain's
    head-race retry), a programming error."""
    if decided := [e.type for e in events if is_decision(e.type)]:
        raise ValueError(f"a new interaction's put records no decision ({', '.join(decided)}): decide it after")


class MemoryStore:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.runs: dict[str, RunSummary] = {}
        self.interactions: dict[tuple[str, str], Interaction] = {}
        self.interaction_runs: dict[str, str] = {}  # interaction id -> run id (put_interaction_indexed)
        self.tool_calls: dict[tuple[str, str], str] = {}  # (run, call key) -> its open tool approval
        self.events: dict[str, list[Event]] = {}
        self.messages: dict[tuple[str, str], list[tuple[Message, bool]]] = {}
        self.waits: dict[tuple[str, str], ParkedWait] = {}
        self.turns: dict[tuple[str, str, int], ReviewTurn] = {}
        self.agent_states: dict[tuple[str, str], AgentStateView] = {}
        self.aways: dict[str, Away] = {}  # operator -> their away
        self.scope_versions: dict[str, int] = {}
        self.asked: dict[str, int] = {}  # run id -> questions asked (put_interaction's count_ask)
        self.votes: dict[tuple[str, str, str], Approval] = {}  # (run, interaction, operator)
        self.tallies: dict[tuple[str, str], ApprovalTally] = {}
        # the tallies of open quorum pauses and their thresholds (DynamoStore: the sparse QUORUM keys)
        self.open_tallies: dict[tuple[str, str], tuple[int, int]] = {}
        self.audit: dict[str, list[AuditRecord]] = {}  # run id -> its chained decision records
        self.audit_heads: dict[str, AuditHead] = {}

    def create_run(self, run: RunSummary) -> None:
        with self._lock:
            if run.run_id in self.runs:
                raise ConflictError(f"run {run.run_id} already exists", details={"run_id": run.run_id})
            self.runs[run.run_id] = run

    def get_run(self, run_id: str) -> RunSummary | None:
        return self.runs.get(run_id)

    def get_runs(self, run_ids: Collection[str]) -> list[RunSummary]:
        return [self.runs[run_id] for run_id in run_ids if run_id in self.runs]

    def update_run(
        self,
        run_id: str,
        changes: dict[str, Any],
        *,
        allowed_from: set[str] | None = None,
        only_if_unset: str | None = None,
    ) -> RunSummary:
        with self._lock:
            run = self.runs.get(run_id)
            if run is None:
                raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
            if allowed_from and run.status not in allowed_from:
                raise ConflictError(f"run {run_id} is {run.status}", details={"current": run.model_dump()})
            if only_if_unset and getattr(run, only_if_unset, None) is not None:
                raise ConflictError(f"run {run_id} has {only_if_unset} set", details={"current": run.model_dump()})
            updated = run.model_copy(update={**changes, "version": run.version + 1})
            self.runs[run_id] = updated
            return updated

    def end_run(
        self, run_id: str, changes: dict[str, Any], event: Event, *, allowed_from: set[str] | None = None
    ) -> None:
        with self._lock:  # DynamoStore: one transaction
            if run_id not in self.runs:
                raise ConflictError(f"run {run_id} not found")
            before = self.runs[run_id]
            self.update_run(run_id, changes, allowed_from=allowed_from, only_if_unset="ended_at")
            try:
                self.append_event(event)
            except Exception:
                self.runs[run_id] = before  # all or nothing
                raise

    def update_run_recording(
        self, run_id: str, changes: dict[str, Any], *, events: Sequence[Event], allowed_from: set[str] | None = None
    ) -> None:
        with self._lock:  # DynamoStore: one transaction
            before = self.runs.get(run_id)
            if before is None:
                raise ConflictError(f"run {run_id} not found")
            self.update_run(run_id, changes, allowed_from=allowed_from)  # ConflictError: nothing written
            logged = list(self.events.get(run_id, []))
            try:
                for event in events:
                    self.append_event(event)
            except Exception:
                self.runs[run_id], self.events[run_id] = before, logged  # all or nothing
                raise

    def put_question(self, question: Interaction, *, events: Sequence[Event]) -> None:
        _refuse_decisions(events)
        with self._lock:  # DynamoStore: one transaction
            self.put_interaction(question, count_ask=True)
            for event in events:
                self.append_event(event)

    def put_pause(self, pause: Interaction, *, events: Sequence[Event]) -> None:
        _refuse_decisions(events)
        with self._lock:  # DynamoStore: one transaction
            self.put_interaction(pause)
            for event in events:
                self.append_event(event)

    def put_interaction(self, interaction: Interaction, *, count_ask: bool = False) -> None:
        key = (interaction.run_id, interaction.interaction_id)
        with self._lock:
            if key in self.interactions:
                raise ConflictError(f"interaction {interaction.interaction_id} already exists")
            if count_ask and interaction.run_id not in self.runs:
                raise NotFoundError(f"run {interaction.run_id} not found")
            self.interactions[key] = interaction
            if count_ask:
                self.asked[interaction.run_id] = self.asked.get(interaction.run_id, 0) + 1

    def get_interaction(self, run_id: str, interaction_id: str) -> Interaction | None:
        return self.interactions.get((run_id, interaction_id))

    def put_interaction_indexed(self, interaction: Interaction) -> None:
        with self._lock:
            if interaction.interaction_id in self.interaction_runs:
                raise ConflictError(f"interaction {interaction.interaction_id} already exists")
            self.put_interaction(interaction)
            self.interaction_runs[interaction.interaction_id] = interaction.run_id

    def open_tool_call(self, run_id: str, call_key: str) -> str | None:
        return self.tool_calls.get((run_id, call_key))

    def put_tool_call_approval(
        self, interaction: Interaction, call_key: str, *, replacing: str | None, events: Sequence[Event]
    ) -> None:
        key = (interaction.run_id, call_key)
        with self._lock:  # DynamoStore: one transaction
            if self.tool_calls.get(key) != replacing:
                raise ConflictError(f"tool call {call_key} already has an open approval")
            self.put_interaction(interaction)
            self.tool_calls[key] = interaction.interaction_id
            for event in events:
                self.append_event(event)

    def find_interaction(self, interaction_id: str) -> Interaction | None:
        run_id = self.interaction_runs.get(interaction_id)
        return self.interactions.get((run_id, interaction_id)) if run_id is not None else None

    def find_for_decision(self, interaction_id: str) -> FoundInteraction | None:
        with self._lock:
            found = self.find_interaction(interaction_id)
            if found is None:
                return None
            return FoundInteraction(
                interaction=found,
                wait=self.get_wait(found.run_id, found.request.node),
                audit_head=self.audit_heads.get(found.run_id, EMPTY_HEAD),
            )

    def transition_interaction(
        self,
        interaction: Interaction,
        new_state: InteractionStatus,
        *,
        with_records: Sequence[Message | Event] = (),
        guards: Sequence[Guard] = (),
        audit_head: AuditHead | None = None,  # under the one lock the current head is always the one read
    ) -> Interaction:
        key = (interaction.run_id, interaction.interaction_id)
        with self._lock:
            current = self.interactions.get(key)
            if current is None:
                raise NotFoundError(f"interaction {interaction.interaction_id} not found")
            if current.state.version != interaction.state.version:
                raise ConflictError(
                    f"interaction {interaction.interaction_id} is already {current.state.status}",
                    details={"interaction": current.public()},
                )
            for guard in guards:
                if not self._holds(guard):
                    raise GuardFailedError(guard)
            for guard in guards:  # a quorum's release takes its tally off the met-but-unreleased list
                if isinstance(guard, QuorumMet):
                    self.open_tallies.pop((guard.run_id, guard.interaction_id), None)
                if isinstance(guard, CarryAnswer):  # the answer carried onto its gate's wait
                    self._carry(guard)
            updated = interaction.model_copy(
                update={"state": new_state.model_copy(update={"version": interaction.state.version + 1})}
            )
            self.interactions[key] = updated
            for record in with_records:  # one lock: all or nothing, like the DynamoDB transaction
                if isinstance(record, Message):
                    self.put_message(record)
                else:
                    self.append_event(record)
            return updated

    def write_claim(
        self,
        interaction: Interaction,
        new_state: InteractionStatus,
        *,
        expected_holder: str | None,
        now: str,
        with_records: Sequence[Event] = (),
        audit_head: AuditHead | None = None,  # under the one lock the current head is always the one read
    ) -> Interaction:
        """DynamoStore's conditional claim write: same version, still pending, and the holder seen then
        (None: no live lease at `now`)."""
        with self._lock:
            current = self.interactions.get((interaction.run_id, interaction.interaction_id))
            holder = current.state.claim_holder(now) if current is not None else None
            if (
                current is None
                or current.state.status != "pending"
                or (expected_holder is None and holder is not None)
                or (expected_holder is not None and current.state.claimed_by != expected_holder)
            ):
                raise ConflictError(f"interaction {interaction.interaction_id} changed while its claim was written")
            return self.transition_interaction(interaction, new_state, with_records=with_records)

    def _carry(self, guard: CarryAnswer) -> None:
        wait = self.waits[(guard.wait.run_id, guard.wait.gate)]
        changes: dict[str, Any] = {"carry_version": wait.carry_version + 1}
        if guard.entry is None:
            changes["carry"] = "off"
        else:
            changes["answers"] = {**wait.answers, guard.interaction_id: guard.entry}
            changes["carried_bytes"] = wait.carried_bytes + len(guard.entry.encode())
        self.waits[(guard.wait.run_id, guard.wait.gate)] = wait.model_copy(update=changes)

    def merge_carried(self, wait: ParkedWait, entries: dict[str, str], *, carry: str, bytes_added: int) -> bool:
        with self._lock:
            current = self.waits.get((wait.run_id, wait.gate))
            if (
                current is None
                or current.status != "parked"
                or current.task_token != wait.task_token
                or current.carry != "filling"
            ):
                return False
            self.waits[(wait.run_id, wait.gate)] = current.model_copy(
                update={
                    "answers": {**current.answers, **entries},
                    "carry": carry,
                    "carry_version": current.carry_version + 1,
                    "carried_bytes": current.carried_bytes + bytes_added,
                }
            )
            return True

    def _carry_holds(self, guard: CarryAnswer) -> bool:
        """The wait exists (open, with `now`), carrying the answers read (with `seen_version`)."""
        wait = self.waits.get((guard.wait.run_id, guard.wait.gate))
        if wait is None or (guard.seen_version is not None and wait.carry_version != guard.seen_version):
            return False
        return guard.now is None or self._holds(WaitStillOpen(guard.wait, guard.now))

    def _holds(self, guard: Guard) -> bool:
        if isinstance(guard, CarryAnswer):
            return self._carry_holds(guard)
        if isinstance(guard, WaitStillOpen):
            wait = self.waits.get((guard.wait.run_id, guard.wait.gate))
            return (
                wait is not None
                and wait.status == "parked"
                and wait.task_token == guard.wait.task_token
                and (wait.deadline is None or wait.deadline > guard.now)
            )
        if isinstance(guard, ScopeUnchanged):
            asked_unchanged = guard.asked is None or self.asked.get(guard.run_id, 0) == guard.asked
            return self.scope_versions.get(guard.run_id, 0) == guard.version and asked_unchanged
        if isinstance(guard, QuorumMet):
            tally = self.get_tally(guard.run_id, guard.interaction_id)
            if guard.approvals is not None:
                return tally.approvals >= guard.approvals
            return guard.rejections is not None and tally.rejections >= guard.rejections
        current = self.interactions.get((guard.interaction.run_id, guard.interaction.interaction_id))
        return current is not None and current.state.status == "pending"

    def record_vote(
        self, vote: Approval, *, event: Event, approvals_needed: int, rejections_needed: int
    ) -> VoteOutcome:
        with self._lock:
            key = (vote.run_id, vote.interaction_id, vote.operator)
            if key in self.votes:
                return "already_counted"
            tally = self.get_tally(vote.run_id, vote.interaction_id)
            current = self.interactions.get((vote.run_id, vote.interaction_id))
            if (
                current is None
                or current.state.status != "pending"
                or tally.approvals >= approvals_needed
                or tally.rejections >= rejections_needed
            ):
                return "closed"
            self.votes[key] = vote
            approve = vote.vote == "approve"
            self.tallies[key[:2]] = ApprovalTally(
                approvals=tally.approvals + approve, rejections=tally.rejections + (not approve)
            )
            self.open_tallies[key[:2]] = (approvals_needed, rejections_needed)
            self.append_event(event)
            return "recorded"

    def list_met_tallies(self) -> list[MetTally]:
        with self._lock:
            return [
                MetTally(run_id=run_id, interaction_id=iid)
                for (run_id, iid), (an, rn) in self.open_tallies.items()
                if self.get_tally(run_id, iid).approvals >= an or self.get_tally(run_id, iid).rejections >= rn
            ]

    def close_tally(self, run_id: str, interaction_id: str) -> None:
        with self._lock:
            self.open_tallies.pop((run_id, interaction_id), None)

    def clear_votes(self, run_id: str, interaction_id: str) -> None:
        with self._lock:
            self.open_tallies.pop((run_id, interaction_id), None)
            self.tallies.pop((run_id, interaction_id), None)
            for key in [k for k in self.votes if k[:2] == (run_id, interaction_id)]:
                del self.votes[key]

    def list_votes(self, run_id: str, interaction_id: str) -> list[Approval]:
        found = [v for (r, i, _), v in self.votes.items() if (r, i) == (run_id, interaction_id)]
        return sorted(found, key=lambda v: (v.at, v.operator))

    def get_tally(self, run_id: str, interaction_id: str) -> ApprovalTally:
        return self.tallies.get((run_id, interaction_id), ApprovalTally())

    def snapshot_run(self, run_id: str) -> RunSnapshot:
        with self._lock:
            pending = [
                i
                for i in self.list_run_interactions(run_id, status="pending")
                if i.request.kind in PENDING_MARKED_KINDS
            ]
            return RunSnapshot(
                run=self.runs.get(run_id),
                pending=pending,
                waits=self.list_run_waits(run_id),
                scope_version=self.scope_versions.get(run_id, 0),
                audit_head=self.audit_heads.get(run_id, EMPTY_HEAD),
                asked=self.asked.get(run_id, 0),
            )

    def bump_scope(self, run_id: str) -> None:
        with self._lock:
            if run_id not in self.runs:
                raise NotFoundError(f"run {run_id} not found")
            self.scope_versions[run_id] = self.scope_versions.get(run_id, 0) + 1

    def close_interactions(
        self, closing: Sequence[tuple[Interaction, InteractionStatus]], *, waits: Sequence[ParkedWait] = ()
    ) -> None:
        with self._lock:  # one lock: all or nothing (DynamoStore: per transaction of 100 items)
            for interaction, _ in closing:
                current = self.interactions.get((interaction.run_id, interaction.interaction_id))
                if current is None or current.state.version != interaction.state.version:
                    raise ConflictError(f"interaction {interaction.interaction_id} changed while it was closed")
            for wait in waits:
                current_wait = self.waits.get((wait.run_id, wait.gate))
                if current_wait is None or current_wait.status not in ("parked", "expiring"):
                    raise ConflictError(f"the wait at {wait.gate} changed while it was closed")
            for interaction, new_state in closing:
                version = interaction.state.version + 1
                self.interactions[(interaction.run_id, interaction.interaction_id)] = interaction.model_copy(
                    update={"state": new_state.model_copy(update={"version": version})}
                )
            for wait in waits:
                self.release_wait(wait, "released")

    def list_run_interactions(
        self, run_id: str, *, kind: str | None = None, status: str | None = None
    ) -> list[Interaction]:
        found = [i for (r, _), i in self.interactions.items() if r == run_id]
        return [
            i
            for i in sorted(found, key=lambda i: (i.created_at, i.interaction_id))
            if (kind is None or i.request.kind == kind) and (status is None or i.state.status == status)
        ]

    def list_by_status(self, kind: str, status: str, *, run_id: str | None = None) -> list[Interaction]:
        return sorted(
            (
                i
                for i in self.interactions.values()
                if i.request.kind == kind and i.state.status == status and (run_id is None or i.run_id == run_id)
            ),
            key=lambda i: (i.run_id, i.created_at, i.interaction_id),
        )

    def page_interactions(
        self,
        kind: str,
        *,
        status: str | None = None,
        run_id: str | None = None,
        limit: int = 50,
        start: dict[str, Any] | None = None,
    ) -> tuple[list[Interaction], dict[str, Any] | None]:
        """DynamoStore's order: by_status (run, created, id) with a status, else the run's ids."""
        if status is None and run_id is None:
            raise ValueError("page_interactions needs a status or a run_id")

        def key(i: Interaction) -> list[str]:
            return [i.run_id, i.created_at, i.interaction_id] if status is not None else [i.interaction_id]

        matching = sorted(
            (
                i
                for i in self.interactions.values()
                if i.request.kind == kind
                and (status is None or i.state.status == status)
                and (run_id is None or i.run_id == run_id)
            ),
            key=key,
        )
        after = (start or {}).get("after")
        if after is not None:
            matching = [i for i in matching if key(i) > after]
        page = matching[:limit]
        return page, ({"after": key(page[-1])} if len(matching) > limit else None)

    def list_pending(self, kind: str) -> list[Interaction]:
        return sorted(
            (i for i in self.interactions.values() if i.request.kind == kind and i.state.status == "pending"),
            key=lambda i: (i.created_at, i.interaction_id),
        )

    def list_due(self, kind: str, now: str) -> list[Interaction]:
        """DynamoStore's due index: the pending ones carrying its keys, by deadline, up to `now`."""
        due = []
        for i in self.list_pending(kind):
            has_default = i.request.ladder is not None and i.request.ladder.default is not None
            keys = due_keys(kind, i.interaction_id, i.expires_at, has_default=has_default)
            if keys and keys[DUE_SK_ATTRIBUTE] < due_before(now):
                due.append((keys[DUE_SK_ATTRIBUTE], i))
        return [i for _, i in sorted(due, key=lambda pair: pair[0])]

    def oldest_pending(self, kind: str) -> Interaction | None:
        return next(iter(self.list_pending(kind)), None)

    def count_pending(self, kind: str) -> int:
        return len(self.list_pending(kind))

    def page_pending(self, kind: str, query: PendingQuery) -> PendingPage[Interaction]:
        """DynamoStore's page: created order, `after` exclusive, `created_before` inclusive; a claim
        counts only while its lease runs at `query.now`."""
        return self._page(self.list_pending(kind), query)

    def page_all_pending(self, query: PendingQuery) -> PendingPage[Interaction]:
        with self._lock:
            pending = [i for i in self.interactions.values() if i.state.status == "pending"]
        return self._page([i for i in pending if query.kinds is None or i.request.kind in query.kinds], query)

    @staticmethod
    def _page(pending: list[Interaction], query: PendingQuery) -> PendingPage[Interaction]:
        now = query.now or ""
        matching = sorted(
            (
                i
                for i in pending
                if (query.run_id is None or i.run_id == query.run_id)
                and (query.node is None or i.node == query.node)
                and (query.claimed_by is None or i.state.claim_holder(now) == query.claimed_by)
                and not (query.unclaimed and i.state.claim_holder(now) is not None)
                and (query.created_before is None or i.created_at <= query.created_before)
            ),
            key=query.position,
            reverse=query.newest_first,
        )
        if query.after is not None:
            after = query.after
            beyond = (lambda p: p < after) if query.newest_first else (lambda p: p > after)
            matching = [i for i in matching if beyond(query.position(i))]
        page = matching[: query.limit]
        return PendingPage(page, query.position(page[-1]) if len(matching) > query.limit else None)

    def append_event(self, event: Event) -> None:
        with self._lock:
            events = self.events.setdefault(event.run_id, [])
            if any(e.event_id == event.event_id for e in events):  # the table's conditional put
                raise ConflictError(f"event {event.event_id} already recorded")
            events.append(event)
            if is_decision(event.type):  # the chain head advances with the decision (DynamoStore: one write)
                records, head = chain([event], self.audit_heads.get(event.run_id, EMPTY_HEAD))
                self.audit.setdefault(event.run_id, []).extend(records)
                self.audit_heads[event.run_id] = head

    def read_audit(self, run_id: str) -> AuditTrail:
        with self._lock:
            return AuditTrail(records=list(self.audit.get(run_id, [])), head=self.audit_heads.get(run_id, EMPTY_HEAD))

    def read_audit_page(self, run_id: str, *, after: int, limit: int) -> AuditTrail:
        trail = self.read_audit(run_id)
        records = sorted((r for r in trail.records if r.seq > after), key=lambda r: r.seq)[:limit]
        return AuditTrail(records=records, head=trail.head)

    def list_events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> list[Event]:
        events = sorted(self.events.get(run_id, []), key=lambda e: e.event_id)
        return [e for e in events if after is None or e.event_id > after][:limit]

    def put_message(self, message: Message) -> None:
        with self._lock:
            self.messages.setdefault((message.run_id, message.node), []).append((message, False))

    def drain_messages(self, run_id: str, node: str, *, drained_at: str) -> list[Message]:
        with self._lock:
            queue = sorted(self.messages.get((run_id, node), []), key=lambda m: m[0].message_id)
            out = [m for m, drained in queue if not drained]
            self.messages[(run_id, node)] = [(m, True) for m, _ in queue]
            return out

    def put_turn(self, turn: ReviewTurn, *, review: Interaction | None = None, events: Sequence[Event] = ()) -> None:
        key = (turn.run_id, turn.interaction_id, turn.n)
        with self._lock:  # DynamoStore: one transaction
            if key in self.turns:
                raise ConflictError(
                    f"turn {turn.n} of interaction {turn.interaction_id} already exists",
                    details={"interaction_id": turn.interaction_id, "n": turn.n},
                )
            if review is not None:
                self.put_interaction(review)
            self.turns[key] = turn
            for event in events:
                self.append_event(event)

    def list_turns(self, run_id: str, interaction_id: str) -> list[ReviewTurn]:
        return sorted(
            (t for (r, i, _), t in self.turns.items() if r == run_id and i == interaction_id), key=lambda t: t.n
        )

    def put_agent_state(
        self, run_id: str, key: str, state: str, *, expected_version: int | None, at: str
    ) -> AgentStateWritten:
        with self._lock:
            current = self.agent_states.get((run_id, key))
            version = current.version if current else 0
            if expected_version is not None and expected_version != version:
                raise ConflictError(
                    f"agent state {key} is at version {version}, not {expected_version}",
                    details={"key": key, "version": version},
                )
            stored = AgentStateView(run_id=run_id, key=key, state=state, version=version + 1, updated_at=at)
            self.agent_states[(run_id, key)] = stored
            return AgentStateWritten(run_id=run_id, key=key, version=stored.version, updated_at=at)

    def get_agent_state(self, run_id: str, key: str) -> AgentStateView | None:
        return self.agent_states.get((run_id, key))

    def delete_agent_state(self, run_id: str, key: str) -> bool:
        with self._lock:
            return self.agent_states.pop((run_id, key), None) is not None

    def put_away(self, away: Away) -> None:
        self.aways[away.operator] = away

    def get_away(self, operator: str) -> Away | None:
        return self.aways.get(operator)

    def list_aways(self) -> list[Away]:
        return sorted(self.aways.values(), key=lambda a: a.operator)

    def delete_away(self, operator: str) -> bool:
        return self.aways.pop(operator, None) is not None

    def put_wait(self, wait: ParkedWait, *, pause_at: str | None = None, events: Sequence[Event] = ()) -> None:
        with self._lock:
            current = self.waits.get((wait.run_id, wait.gate))
            open_ = current is not None and current.status in ("parked", "expiring")
            if open_ and current is not None and current.task_token != wait.task_token:
                raise already_parked(wait.run_id, wait.gate)
            self.waits[(wait.run_id, wait.gate)] = wait
            if wait.status == "parked":  # its gate on each interaction it names, as DynamoStore's one write
                for iid in wait.interaction_ids:
                    found = self.interactions.get((wait.run_id, iid))
                    if found is not None:
                        self.interactions[(wait.run_id, iid)] = found.model_copy(update={"blocks": wait.gate})
            if pause_at is not None:  # an open run paused, in the same write
                changes = {"status": "paused_waiting_human", "updated_at": pause_at}
                with contextlib.suppress(ConflictError):
                    self.update_run(wait.run_id, changes, allowed_from=set(OPEN_RUN_STATES))
            for event in events:
                self.append_event(event)

    def mark_blocked(self, run_id: str, gate: str, interaction_ids: Sequence[str]) -> int:
        marked = 0
        with self._lock:
            for iid in dict.fromkeys(interaction_ids):
                found = self.interactions.get((run_id, iid))
                if found is not None and found.state.status == "pending":
                    self.interactions[(run_id, iid)] = found.model_copy(update={"blocks": gate})
                    marked += 1
        return marked

    def get_wait(self, run_id: str, gate: str) -> ParkedWait | None:
        return self.waits.get((run_id, gate))

    def get_wait_and_head(self, run_id: str, gate: str) -> tuple[ParkedWait | None, AuditHead]:
        with self._lock:
            return self.waits.get((run_id, gate)), self.audit_heads.get(run_id, EMPTY_HEAD)

    def get_run_and_wait(self, run_id: str, gate: str) -> tuple[RunSummary | None, ParkedWait | None]:
        with self._lock:
            return self.runs.get(run_id), self.waits.get((run_id, gate))

    def record_park(
        self, run_id: str, *, events: Sequence[Event], pause_at: str | None = None, if_paused: Sequence[Event] = ()
    ) -> bool:
        with self._lock:  # DynamoStore: one transaction
            self.bump_scope(run_id)
            paused = False
            if pause_at is not None:
                try:
                    changes = {"status": "paused_waiting_human", "updated_at": pause_at}
                    self.update_run(run_id, changes, allowed_from={"created", "running"})
                    paused = True
                except ConflictError:
                    pass
            for event in [*events, *(if_paused if paused else ())]:
                self.append_event(event)
            return paused

    def release_wait(self, wait: ParkedWait, status: str) -> bool:
        """From parked (or, unless it is the move to expiring, from expiring), like DynamoStore."""
        allowed = ("parked",) if status == "expiring" else ("parked", "expiring")
        with self._lock:
            current = self.waits.get((wait.run_id, wait.gate))
            if current is None or current.status not in allowed or current.task_token != wait.task_token:
                return False
            cleared = {} if status == "expiring" else {"answers": {}}  # the output is sent (as DynamoStore)
            self.waits[(wait.run_id, wait.gate)] = current.model_copy(update={"status": status, **cleared})
            return True

    def record_release(
        self,
        wait: ParkedWait,
        *,
        run_status: str,
        run_from: set[str],
        events: Sequence[Event],
        if_moved: Sequence[Event] = (),
    ) -> bool:
        with self._lock:  # one lock: all or nothing, like the DynamoDB transaction
            if not self.release_wait(wait, "released"):
                return False
            run = self.runs.get(wait.run_id)
            if run is not None and run.status in run_from:
                at = events[0].at if events else run.updated_at
                self.update_run(wait.run_id, {"status": run_status, "updated_at": at})
                events = [*events, *if_moved]
            elif run is not None and run_from and run.status in TERMINAL_RUN_STATES:
                events = [*events, *if_moved]  # the send let it run to its end first: it did move
            for event in events:
                self.append_event(event)
            return True

    def list_parked(self) -> list[ParkedWait]:
        """The pending index lists parked and expiring waits (DynamoStore keeps both on it)."""
        return [w for w in self.waits.values() if w.status in ("parked", "expiring")]

    def list_run_waits(self, run_id: str) -> list[ParkedWait]:
        return sorted((w for (r, _), w in self.waits.items() if r == run_id), key=lambda w: w.gate)


class RecordingTaskTokens:
    """Accepts each token once, like Step Functions; `fail_next` simulates a refused or failed send."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []
        self.used: set[str] = set()
        self.fail_next: Exception | None = None

    def _check(self, token: str) -> None:
        if self.fail_next is not None:
            err, self.fail_next = self.fail_next, None
            raise err
        if token in self.used:
            # What AWS says for a token that was already closed ("expired or already closed").
            raise TaskTokenError("task already closed", reason="TaskTimedOut")
        self.used.add(token)

    def send_success(self, token: str, output: dict[str, Any]) -> None:
        self._check(token)
        self.sent.append(("success", token, output))

    def send_failure(self, token: str, error: str, cause: str) -> None:
        self._check(token)
        self.sent.append(("failure", token, {"error": error, "cause": cause}))


class FakeWorkflows:
    def __init__(self) -> None:
        self.started: list[tuple[str, str, dict[str, Any]]] = []
        self.status: dict[str, dict[str, Any]] = {}

    def start(self, state_machine_arn: str, run_id: str, payload: dict[str, Any]) -> str:
        arn = f"{state_machine_arn.replace(':stateMachine:', ':execution:')}:{run_id}"
        if arn in self.status:
            raise ConflictError(f"an execution named {run_id} already exists")
        self.started.append((state_machine_arn, run_id, payload))
        self.status[arn] = {"status": "RUNNING"}
        return arn

    def describe(self, execution_arn: str) -> dict[str, Any]:
        return self.status[execution_arn]

    def stop(self, execution_arn: str, *, error: str, cause: str) -> None:
        if self.status[execution_arn]["status"] == "RUNNING":
            self.status[execution_arn] = {"status": "ABORTED", "error": error, "cause": cause}


class MemoryInboxSessions:
    """`InboxSessionStore` in memory: the open sessions as (operator, session id) -> expiry."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str], int] = {}

    def open_session(self, operator: str, session_id: str, expires_at: int) -> None:
        self.sessions[(operator, session_id)] = expires_at

    def is_open(self, operator: str, session_id: str) -> bool:
        return (operator, session_id) in self.sessions

    def end_session(self, operator: str, session_id: str) -> None:
        self.sessions.pop((operator, session_id), None)

    def end_sessions(self, operator: str | None) -> int:
        ended = [key for key in self.sessions if operator is None or key[0] == operator]
        for key in ended:
            del self.sessions[key]
        return len(ended)


class MemoryPushSubscriptions:
    """`PushSubscriptionStore` in memory, with the DynamoDB adapter's rule: a subscription is stored once."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], PushSubscription] = {}

    def add_subscription(self, subscription: PushSubscription) -> tuple[PushSubscription, bool]:
        key = (subscription.operator, subscription.subscription_id)
        if key in self.items:
            return self.items[key], False
        self.items[key] = subscription
        return subscription, True

    def list_subscriptions(self, operator: str) -> list[PushSubscription]:
        return [s for (owner, _), s in sorted(self.items.items()) if owner == operator]

    def delete_subscription(self, operator: str, subscription_id: str) -> bool:
        return self.items.pop((operator, subscription_id), None) is not None
