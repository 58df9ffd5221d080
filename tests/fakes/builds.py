"""In-memory `BuildRecords` (the review gate's build records and reports), as the DynamoDB adapter
behaves: `claim_build` is conditional on the record still holding that build and running."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.domain.merge_contracts import BuildKind, BuildRecord, BuildReport, BuildRequest


class RecordingBuildRunner:
    """A `BuildRunner` that starts nothing: it keeps each request (a test runs the build itself, e.g.
    with `baton.merge.build.run_build`) and returns a CodeBuild-like handle."""

    def __init__(self) -> None:
        self.started: list[BuildRequest] = []

    def start(self, request: BuildRequest) -> str:
        self.started.append(request)
        return f"proj:{len(self.started)}"


class MemoryBuildRecords:
    def __init__(self) -> None:
        self.builds: dict[tuple[str, str, str], BuildRecord] = {}
        self.reports: dict[tuple[str, str, str], BuildReport] = {}
        self._lock = threading.Lock()

    def put_report(self, report: BuildReport) -> None:
        self.reports[(report.run_id, report.gate, report.kind)] = report.model_copy(deep=True)

    def get_report(self, run_id: str, gate: str, kind: BuildKind) -> BuildReport | None:
        return self.reports.get((run_id, gate, kind))

    def put_build(self, record: BuildRecord) -> None:
        self.builds[(record.run_id, record.gate, record.kind)] = record

    def get_build(self, run_id: str, gate: str, kind: BuildKind) -> BuildRecord | None:
        return self.builds.get((run_id, gate, kind))

    def claim_build(self, run_id: str, gate: str, kind: BuildKind, build_key: str) -> tuple[bool, BuildRecord | None]:
        key = (run_id, gate, kind)
        with self._lock:
            current = self.builds.get(key)
            if current is None or current.status != "running" or current.build_key != build_key:
                return False, current
            self.builds[key] = current.model_copy(update={"status": "finished"})
            return True, self.builds[key]

    def reopen_build(self, record: BuildRecord) -> None:
        self._move(record, "finished", "running")

    def _move(self, record: BuildRecord, old: str, new: str) -> bool:
        key = (record.run_id, record.gate, record.kind)
        with self._lock:
            current = self.builds.get(key)
            if current is None or current.status != old or current.build_key != record.build_key:
                return False
            self.builds[key] = current.model_copy(update={"status": new})
            return True
