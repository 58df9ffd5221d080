"""The store's writes that keep a pause's life to few AWS calls (issue 33): each does in one call what
took several (`baton/ports.py` composes them into `RunStore`, `InteractionStore` and `WaitStore`, as its
other parts; the review gate's ports are in `review_ports.py`, Web Push's in `push_ports.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.audit import AuditHead
    from baton.models import Event, Interaction, ParkedWait, RunSummary


class RunEnds(Protocol):
    def end_run(
        self, run_id: str, changes: dict[str, Any], event: Event, *, allowed_from: set[str] | None = None
    ) -> None:
        """A run's end: the update (while `ended_at` is unset and its status in `allowed_from`) and its
        event in one write; ConflictError if the run is elsewhere, has ended or is missing."""
        ...

    def update_run_recording(
        self, run_id: str, changes: dict[str, Any], *, events: Sequence[Event], allowed_from: set[str] | None = None
    ) -> None:
        """The run's update (while its status is in `allowed_from`) and `events` (decisions chained) in one
        write (a merge's record, a tool await's resume); ConflictError if the run is elsewhere or missing."""
        ...


class QuestionPuts(Protocol):
    def put_question(self, question: Interaction, *, events: Sequence[Event]) -> None:
        """A new pending question, counted on its run (which must exist), with `events`: one write.
        ConflictError if it exists; ValueError if an event is a decision (a decision chains after the head)."""
        ...

    def put_pause(self, pause: Interaction, *, events: Sequence[Event]) -> None:
        """A new pending pause (a blocking ask: not counted as a question) with `events`: one write.
        ConflictError if it exists; ValueError if an event is a decision."""
        ...


class GateParks(Protocol):
    def get_run_and_wait(self, run_id: str, gate: str) -> tuple[RunSummary | None, ParkedWait | None]:
        """The run and its wait at `gate` in one read (a park's: is the run there, did an earlier attempt
        of this park leave its wait?)."""
        ...

    def get_wait_and_head(self, run_id: str, gate: str) -> tuple[ParkedWait | None, AuditHead]:
        """The wait at `gate` and the run's decision-log head in one read (a review action's: the deadline
        it checks, the head its decision chains after)."""
        ...

    def record_park(
        self, run_id: str, *, events: Sequence[Event], pause_at: str | None = None, if_paused: Sequence[Event] = ()
    ) -> bool:
        """A gate's park on its run, in one write: the scope version bumped (`ScopeUnchanged`), `events`
        recorded and, with `pause_at`, a created or running run paused with `if_paused` recorded (a run
        elsewhere: the bump and `events` alone). True if it paused."""
        ...
