"""Ports: what the domain needs from the outside world. Adapters implement them (boto3 lives there);
the tests' in-memory fakes live in `tests/fakes/`. Beside it: review_ports.py, push_ports.py, life_ports.py.

The store is split by what a consumer needs: runs, interactions, events, the per-node message queue,
review turns, agents' states and parked waits. `Store` composes them all (the DynamoDB adapter implements it, and the
services reach it as `Core.store`); a function or class that needs one part names that part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from baton.life_ports import GateParks, QuestionPuts, RunEnds
from baton.review_ports import ReviewTurnStore

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from baton.channels.email.links import LinkUse
    from baton.contracts.agent_state import AgentStateView, AgentStateWritten
    from baton.contracts.away import Away
    from baton.domain.approval import Approval, ApprovalTally, MetTally, VoteOutcome
    from baton.domain.audit import AuditHead, AuditTrail
    from baton.domain.gate_payloads import GateDeadlinePayload
    from baton.models import (
        Event,
        Interaction,
        InteractionStatus,
        Message,
        ParkedWait,
        RunSummary,
    )
    from baton.notify.model import Notification
    from baton.pending_query import PendingPage, PendingQuery


@dataclass(frozen=True)
class RunSnapshot:
    """What one consistent read of a run's partition tells the answer path (`InteractionStore.snapshot_run`):
    the run, its open questions, tool-form awaits and pauses (`PENDING_MARKED_KINDS`), its waits, and the run's
    scope version (bumped when a gate or a tool await starts waiting on the run's questions), and the
    head of the run's decision log (`baton/domain/audit.py`; None: not read)."""

    run: RunSummary | None
    pending: list[Interaction] = field(default_factory=list)
    waits: list[ParkedWait] = field(default_factory=list)
    scope_version: int = 0
    audit_head: AuditHead | None = None
    asked: int = 0  # how many questions the run has been asked (`ScopeUnchanged.asked`)


@dataclass(frozen=True)
class FoundInteraction:
    """An interaction found by its id alone (`InteractionStore.find_for_decision`), with what deciding
    on it needs from its run, read together: the wait at its node (None: nothing parked there) and the
    run's decision-log head."""

    interaction: Interaction
    wait: ParkedWait | None
    audit_head: AuditHead


@dataclass(frozen=True)
class WaitStillOpen:
    """A guard: the wait is still parked with this token and (if it has one) its deadline is after `now`."""

    wait: ParkedWait
    now: str


@dataclass(frozen=True)
class ScopeUnchanged:
    """A guard: no gate or tool await started waiting on the run since `version` was read (and, with
    `asked`, no question was asked on it since its count was read: an answer that releases a gate from
    its carried answers, without reading the scope, is refused if a question joined the scope meanwhile)."""

    run_id: str
    version: int
    asked: int | None = None


@dataclass(frozen=True)
class CarryAnswer:
    """A guard that also writes (one Update of the wait): the wait is still open, as `WaitStillOpen`
    (with `now`; None: only that the wait exists), and the answer is added to the answers it carries
    (`entry`, JSON; None: too large to carry, the wait stops carrying). With `seen_version`, only if its
    carried answers are still the ones read: the answer that releases the gate from them."""

    wait: ParkedWait
    now: str | None
    interaction_id: str
    entry: str | None
    seen_version: int | None = None


@dataclass(frozen=True)
class StillPending:
    """A guard: this interaction is still pending (another answer in the same scope has not landed)."""

    interaction: Interaction


@dataclass(frozen=True)
class QuorumMet:
    """A guard: the pause's vote tally (`ApprovalStore`) has `approvals` approvals or `rejections`
    rejections (whichever is set): a quorum pause is released only by the write that sees it met."""

    run_id: str
    interaction_id: str
    approvals: int | None = None
    rejections: int | None = None


Guard = WaitStillOpen | ScopeUnchanged | StillPending | QuorumMet | CarryAnswer


class GuardFailedError(Exception):
    """A guarded transition was refused because `guard` no longer held (nothing was written); `guard` is
    None when the transaction met a concurrent one (read again and retry)."""

    def __init__(self, guard: Guard | None) -> None:
        super().__init__(f"guard failed: {type(guard).__name__ if guard else 'a concurrent transaction'}")
        self.guard = guard


# The kinds whose pending interactions the store can list from the run's own partition in O(pending)
# (each pending one has a PEND# marker, so `snapshot_run` reads it whole: a pause's resume needs no
# read of its own).
PENDING_MARKED_KINDS = ("question", "await", "ask")


class RunStore(RunEnds, Protocol):
    """Run records (one item per run)."""

    def create_run(self, run: RunSummary) -> None: ...
    def get_run(self, run_id: str) -> RunSummary | None: ...
    # many runs at once (BatchGetItems of 100, eventually consistent: a listing's labels); unknown ids skipped
    def get_runs(self, run_ids: Collection[str]) -> list[RunSummary]: ...
    def update_run(
        self,
        run_id: str,
        changes: dict[str, Any],
        *,
        allowed_from: set[str] | None = None,
        only_if_unset: str | None = None,  # a field that must not be set yet (a run's end: `ended_at`)
    ) -> RunSummary: ...


class InteractionStore(QuestionPuts, Protocol):
    """Human interactions (questions, interrupts, reviews), each moved by conditional transitions."""

    def put_interaction(self, interaction: Interaction, *, count_ask: bool = False) -> None: ...
    def get_interaction(self, run_id: str, interaction_id: str) -> Interaction | None: ...
    def transition_interaction(
        self,
        interaction: Interaction,
        new_state: InteractionStatus,
        *,
        with_records: Sequence[Message | Event] = (),
        guards: Sequence[Guard] = (),
        audit_head: AuditHead | None = None,  # the run's decision-log head as read (snapshot_run); None: read it
    ) -> Interaction: ...
    # a claim change of a pending interrupt: conditional on the version read and on its holder then
    # (`expected_holder`; None: no live lease at `now`); ConflictError when either changed. `with_records`
    # (the change's event) go in the same write, chained after `audit_head` when it is a decision
    def write_claim(
        self,
        interaction: Interaction,
        new_state: InteractionStatus,
        *,
        expected_holder: str | None,
        now: str,
        with_records: Sequence[Event] = (),
        audit_head: AuditHead | None = None,
    ) -> Interaction: ...
    # a run's stop (baton/services/run_stop.py): each interaction moved to its new state (conditional on the
    # version read, its pending marker with it) and each wait released, in transactions of at most 100
    # items; ConflictError when one changed since it was read (the transactions before it are written)
    def close_interactions(
        self, closing: Sequence[tuple[Interaction, InteractionStatus]], *, waits: Sequence[ParkedWait] = ()
    ) -> None: ...
    # one consistent read: the run, its pending questions, tool awaits and pauses, its waits (O(pending + waits))
    def snapshot_run(self, run_id: str) -> RunSnapshot: ...
    def bump_scope(self, run_id: str) -> None: ...
    def list_run_interactions(
        self, run_id: str, *, kind: str | None = None, status: str | None = None
    ) -> list[Interaction]: ...
    def list_by_status(self, kind: str, status: str, *, run_id: str | None = None) -> list[Interaction]: ...
    def list_pending(self, kind: str) -> list[Interaction]: ...
    # the sweeps' reads (O(due), never every pending one): `kind`'s pending ones whose deadline Baton acts on
    # (every interrupt with one, a question with a declared default), past by `now` (ISO); the oldest
    # pending one, and how many are pending, without reading them (baton/workflows/table.py, GSI4/GSI1)
    def list_due(self, kind: str, now: str) -> list[Interaction]: ...
    def oldest_pending(self, kind: str) -> Interaction | None: ...
    def count_pending(self, kind: str) -> int: ...
    # the inbox's page of a kind's pending ones, or of every kind's (or `query.kinds`') at once: `PendingPage`
    def page_pending(self, kind: str, query: PendingQuery) -> PendingPage[Interaction]: ...
    def page_all_pending(self, query: PendingQuery) -> PendingPage[Interaction]: ...
    def page_interactions(
        self,
        kind: str,
        *,
        status: str | None = None,
        run_id: str | None = None,
        limit: int = 50,
        start: dict[str, Any] | None = None,
    ) -> tuple[list[Interaction], dict[str, Any] | None]: ...
    # interactions addressed by id alone (interrupts: /api/v1/interrupts/{id}); an IID#<iid> pointer item
    def put_interaction_indexed(self, interaction: Interaction) -> None: ...
    def find_interaction(self, interaction_id: str) -> Interaction | None: ...
    def find_for_decision(self, interaction_id: str) -> FoundInteraction | None: ...
    # tool approvals (issue 30): the approval a repeat of a call finds, by the call's key (one GetItem), and
    # a new approval put with that key and its `events` (decisions chained) in one write, conditional on the
    # key still naming `replacing` (None: no approval yet); ConflictError when another request's approval
    # took the key first
    def open_tool_call(self, run_id: str, call_key: str) -> str | None: ...
    def put_tool_call_approval(
        self, interaction: Interaction, call_key: str, *, replacing: str | None, events: Sequence[Event]
    ) -> None: ...


class EventStore(Protocol):
    """A run's append-only event log, read in id order. Decision events (`baton/domain/audit.py`) are
    also chained per run: wherever one is written, the run's chain head advances in the same write
    (conditional on the head read, retried on a lost race)."""

    def append_event(self, event: Event) -> None: ...
    def list_events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> list[Event]: ...
    # the run's chained decision records and its chain head, read consistently; or the head and a page
    def read_audit(self, run_id: str) -> AuditTrail: ...
    def read_audit_page(self, run_id: str, *, after: int, limit: int) -> AuditTrail: ...


class MessageStore(Protocol):
    """Answers queued for a node until it drains them."""

    def put_message(self, message: Message) -> None: ...
    def drain_messages(self, run_id: str, node: str, *, drained_at: str) -> list[Message]: ...


class AgentStateStore(Protocol):
    """An agent's opaque states, one item each in its run's partition (`baton/services/agent_state.py`)."""

    def put_agent_state(
        self, run_id: str, key: str, state: str, *, expected_version: int | None, at: str
    ) -> AgentStateWritten:
        """Write it as the next version; with `expected_version`, only over that one (0: none stored),
        else `ConflictError` naming the current version."""
        ...

    def get_agent_state(self, run_id: str, key: str) -> AgentStateView | None: ...
    def delete_agent_state(self, run_id: str, key: str) -> bool: ...


class WaitStore(GateParks, Protocol):
    """Parked task tokens: one per gate, released by a conditional write; parked with the run's pause and events."""

    def put_wait(self, wait: ParkedWait, *, pause_at: str | None = None, events: Sequence[Event] = ()) -> None: ...
    def get_wait(self, run_id: str, gate: str) -> ParkedWait | None: ...
    def release_wait(self, wait: ParkedWait, status: str) -> bool: ...
    # the bookkeeping of a delivered release in one write: the wait released, the run moved if it is in
    # `run_from` (else left alone), the events recorded. False if the wait was no longer parked.
    # `if_moved`: events written only if the run moved, or has already ended (the send let it finish first)
    def record_release(
        self,
        wait: ParkedWait,
        *,
        run_status: str,
        run_from: set[str],
        events: Sequence[Event],
        if_moved: Sequence[Event] = (),
    ) -> bool: ...
    def list_parked(self) -> list[ParkedWait]: ...
    def list_run_waits(self, run_id: str) -> list[ParkedWait]: ...
    # `gate` written on each of these still pending interactions as what it holds up (`put_wait` does it
    # for the wait's own `interaction_ids`, in its write); returns how many were pending
    def mark_blocked(self, run_id: str, gate: str, interaction_ids: Sequence[str]) -> int: ...
    # `entries` (the answers in scope, read after a park) added to the wait's carried answers (each by
    # its own key: an answer carrying itself meanwhile is kept) and its carry set to `carry`, in one
    # Update, only while the wait is parked with its token and still "filling". False otherwise.
    def merge_carried(self, wait: ParkedWait, entries: dict[str, str], *, carry: str, bytes_added: int) -> bool: ...


class ApprovalStore(Protocol):
    """The votes on quorum pauses (baton.domain.approval): one record per (interaction, operator) and a
    tally, both written in one transaction guarded by the tally being below `approvals_needed` approvals
    and `rejections_needed` rejections and the interaction still pending."""

    def record_vote(
        self, vote: Approval, *, event: Event, approvals_needed: int, rejections_needed: int
    ) -> VoteOutcome: ...
    def list_votes(self, run_id: str, interaction_id: str) -> list[Approval]: ...
    def get_tally(self, run_id: str, interaction_id: str) -> ApprovalTally: ...
    def list_met_tallies(self) -> list[MetTally]:
        """Tallies at a threshold whose pause was not released (a `QuorumMet` release takes its tally off)."""
        ...

    def close_tally(self, run_id: str, interaction_id: str) -> None:
        """Take a tally off that list without a release (its pause ended another way)."""
        ...

    def clear_votes(self, run_id: str, interaction_id: str) -> None:
        """Remove a pause's votes and tally (a review gate reopened for a new round; each vote stays in
        the run's chained `approval_recorded` events)."""
        ...


class AwayStore(Protocol):
    """Operators away, one record each (`baton.contracts.away`). `list_aways` is every stored one (a
    handful: one partition), read where a named seat may have a delegate standing in for it."""

    def put_away(self, away: Away) -> None: ...
    def get_away(self, operator: str) -> Away | None: ...
    def list_aways(self) -> list[Away]: ...
    def delete_away(self, operator: str) -> bool: ...


class Store(
    RunStore,
    InteractionStore,
    EventStore,
    MessageStore,
    ReviewTurnStore,
    AgentStateStore,
    WaitStore,
    ApprovalStore,
    AwayStore,
    Protocol,
):
    """Everything the services keep (one DynamoDB table)."""


class AuditArchive(Protocol):
    """Where decision records are copied to be kept unchanged (deployed: an S3 bucket with Object Lock).
    Putting a key already there is a no-op (a redelivered stream batch)."""

    def put(self, key: str, body: bytes) -> None: ...


class TaskTokens(Protocol):
    """Step Functions' task-token callbacks. Errors become `TaskTokenError` with a reason."""

    def send_success(self, token: str, output: dict[str, Any]) -> None: ...
    def send_failure(self, token: str, error: str, cause: str) -> None: ...


class Workflows(Protocol):
    """Starting and reading hosted runs (Step Functions executions)."""

    def start(self, state_machine_arn: str, run_id: str, payload: dict[str, Any]) -> str: ...
    def describe(self, execution_arn: str) -> dict[str, Any]: ...
    # StopExecution: the run ends as aborted (an execution that already ended is left as it is).
    def stop(self, execution_arn: str, *, error: str, cause: str) -> None: ...


class DeadlineTimers(Protocol):
    """Starts a gate's timer: after `wait_seconds` it invokes the `gate_deadline` Lambda with `payload`.
    Starting the same `name` again is a no-op (a retried park). `stop` ends a timer still waiting (its
    gate was released); stopping one that has ended, or never started, is a no-op."""

    def start(self, name: str, payload: GateDeadlinePayload, wait_seconds: int) -> None: ...
    def stop(self, name: str) -> None: ...


class AnswerLinkStore(Protocol):
    """The single-use email answer links (`baton/channels/email/links.py`): a link answers once.

    `claim_link` is the conditional write that decides it: it records the use unless the link was used
    before (then it returns that earlier use) or another claim of it is still fresh (`stale_before`: a
    claim left by a request that died may be taken over after it). `complete_link` records the answer
    the claim stored; `release_link` drops a claim whose answer was not stored (so the link still works)."""

    def claim_link(self, use: LinkUse, *, stale_before: str) -> LinkUse | None: ...
    def complete_link(self, use: LinkUse) -> None: ...
    def release_link(self, use: LinkUse) -> None: ...
    def get_link(self, run_id: str, link_id: str) -> LinkUse | None: ...


class InboxSessionStore(Protocol):
    """The local web inbox's signed-in sessions (`baton/local/inbox.py`). A session cookie is honoured
    only while its session is open here, so signing out ends it on the server, not only in the browser.

    `end_sessions` ends every session of `operator`, or of every operator when it is None; it returns
    how many it ended."""

    def open_session(self, operator: str, session_id: str, expires_at: int) -> None: ...
    def is_open(self, operator: str, session_id: str) -> bool: ...
    def end_session(self, operator: str, session_id: str) -> None: ...
    def end_sessions(self, operator: str | None) -> int: ...


class Notifier(Protocol):
    """Publishes one notification (the SNS topic deployed); returns the message id."""

    def publish(self, notification: Notification) -> str: ...
