"""The review gate's builds (the diff and the merge), each a `.waitForTaskToken` task whose token stays
in Baton's table (a `BuildRecord`): the build gets no token and writes its `BuildReport` into the table.
`build_finished` claims the record with one conditional write, so a build's end sends its token exactly once."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from baton.contracts.review import BuildSent
from baton.domain.merge_contracts import ERROR_CRASHED, BuildRecord, BuildReport
from baton.errors import TaskTokenError, ValidationFailedError

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.domain.merge_contracts import BoundedDiff, BuildFinished, BuildKind, BuildRequest, DiffRequest
    from baton.review_ports import BuildRecords, BuildRunner
    from baton.services.core import Core

log = logging.getLogger("baton")
BUILD_KEYS = {"run_id", "gate", "kind", "build_key"}  # a build's record and its report, by gate and kind


class ReviewBuilds:
    core: Core
    records: BuildRecords
    runner: Callable[[], BuildRunner]

    def start_build(self, request: BuildRequest, token: str) -> str:
        request = request.model_copy(update={"build_key": self.core.ids.new_id()})
        keys = request.model_dump(include=BUILD_KEYS)
        self.records.put_build(BuildRecord(**keys, task_token=token, started_at=self.core.now()))
        return self.runner().start(request)

    def build_finished(self, event: BuildFinished) -> BuildSent:
        claimed, record = self.records.claim_build(event.run_id, event.gate, event.kind, event.build_key)
        if record is None or record.build_key != event.build_key:
            return BuildSent(sent=False, reason="no such build (or a later build of this gate replaced it)")
        if not claimed:
            return BuildSent(sent=False, reason="this build's end was already handled")
        report = self._report_of(event.run_id, event.gate, event.kind, event.build_key)
        try:
            sent = self._send_token(record, report, event)
        except Exception:
            self.records.reopen_build(record)  # a redelivery (the event's retry) sends it again
            raise
        return BuildSent(sent=sent, kind=event.kind, build_status=event.build_status)

    def _send_token(self, record: BuildRecord, report: BuildReport | None, event: BuildFinished) -> bool:
        tokens = self.core.tokens
        if record.kind == "diff" and report is None:  # stored, so the first turn refuses with this reason
            cause = f"the diff build ended {event.build_status} without reporting a diff"
            report = BuildReport(**record.model_dump(include=BUILD_KEYS), error=ERROR_CRASHED, cause=cause)
            self.records.put_report(report)
        try:
            if record.kind == "diff" and report is not None:
                tokens.send_success(record.task_token, {"reported": report.diff is not None})
            elif report is not None and report.outcome is not None:
                tokens.send_success(record.task_token, report.outcome.model_dump(mode="json"))
            elif report is not None and report.error is not None:
                tokens.send_failure(record.task_token, report.error, report.cause or "")
            else:
                cause = f"the merge build ended {event.build_status} without reporting an outcome"
                if event.build_id:
                    cause += f" (build {event.build_id}: see its log)"
                tokens.send_failure(record.task_token, ERROR_CRASHED, cause)
        except TaskTokenError as err:
            # The task is gone (it timed out, or its execution stopped): nothing is waiting any more.
            log.info("build finished after its task closed: %s", err.reason, extra={"run_id": record.run_id})
            return False
        return True

    def _report_of(self, run_id: str, gate: str, kind: BuildKind, build_key: str) -> BuildReport | None:
        """The report of this very build (a stale one from an earlier entry into the gate is ignored)."""
        report = self.records.get_report(run_id, gate, kind)
        return report if report is not None and report.build_key == build_key else None

    def run_branch_diff(self, request: DiffRequest) -> BoundedDiff:
        """The `DiffSource` of the stacks: the diff the gate's latest diff build reported, else a refusal."""
        run_id, gate = request.run_id, request.gate
        record = self.records.get_build(run_id, gate, "diff")
        if record is None:
            raise ValidationFailedError(
                f"review gate '{gate}' has no diff build (its Diff state did not run)", details={"path": "gate"}
            )
        report = self._report_of(run_id, gate, "diff", record.build_key)
        if report is None:
            raise ValidationFailedError(
                f"the diff build of review gate '{gate}' has not reported a diff", details={"path": "run_branch"}
            )
        if report.diff is None:
            raise ValidationFailedError(
                f"the diff of review gate '{gate}' could not be computed: {report.cause}",
                details={"path": "run_branch", "error": report.error},
            )
        return report.diff
