"""The review gate's ports: the companion that reads the diff and gives a verdict, the bounded diff of
the run branch, and the CodeBuild builds (adapters: companion_*.py, git_diff.py, merge_runners.py,
build_records.py), and the store's dialogue turns (`DynamoStore`, one of `baton/ports.py`'s `Store`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.companion import CompanionContext, CompanionTurn, ThreadTurn
    from baton.domain.merge_contracts import (
        BoundedDiff,
        BuildKind,
        BuildRecord,
        BuildReport,
        BuildRequest,
        DiffRequest,
    )
    from baton.models import Event, Interaction, ReviewTurn


@runtime_checkable
class Companion(Protocol):
    """The review companion: guides the operator through testing a change and gives a verdict."""

    def first_turn(self, ctx: CompanionContext) -> CompanionTurn:
        """Read the bounded diff; return numbered test steps for the operator and an initial verdict."""
        ...

    def reply(self, ctx: CompanionContext, thread: list[ThreadTurn], operator_message: str) -> CompanionTurn:
        """Answer `operator_message` (not yet in `thread`); converge on a verdict near max_turns."""
        ...


class DiffSource(Protocol):
    """The run branch's own changes, bounded for a reviewer and a companion model."""

    def run_branch_diff(self, request: DiffRequest) -> BoundedDiff: ...


class BuildRunner(Protocol):
    def start(self, request: BuildRequest) -> str:
        """Start the build (the bounded diff or the merge); it writes a `BuildReport` and Baton learns of
        its end (`BuildFinished`). Returns a handle (build id, thread). Never given a task token."""
        ...


class BuildReportWriter(Protocol):
    """All a build may do to Baton's table: write its report (no read, no token)."""

    def put_report(self, report: BuildReport) -> None: ...


class BuildRecords(BuildReportWriter, Protocol):
    """The review gate's builds: the record holding the parked token and the report the build wrote."""

    def put_build(self, record: BuildRecord) -> None: ...
    def get_build(self, run_id: str, gate: str, kind: BuildKind) -> BuildRecord | None: ...
    def claim_build(self, run_id: str, gate: str, kind: BuildKind, build_key: str) -> tuple[bool, BuildRecord | None]:
        """running -> finished if the record holds this build (True), in one write; with the record as it
        is after (None: no record). False: another build replaced it, or another call claimed it."""
        ...

    def reopen_build(self, record: BuildRecord) -> None:
        """finished -> running again (its token's send failed; the next delivery of the end retries)."""
        ...

    def get_report(self, run_id: str, gate: str, kind: BuildKind) -> BuildReport | None: ...


class ReviewTurnStore(Protocol):
    """Review dialogue turns (one item each, read back in order)."""

    def put_turn(self, turn: ReviewTurn, *, review: Interaction | None = None, events: Sequence[Event] = ()) -> None:
        """The turn and its `events` in one write; with `review`, the new review whose first turn it is. A
        taken `n` (or a stored review) is a ConflictError, and nothing is written."""
        ...

    def list_turns(self, run_id: str, interaction_id: str) -> list[ReviewTurn]: ...
