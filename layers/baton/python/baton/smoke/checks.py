"""The checks of `baton smoke`, each through the SDK (`baton.Client`) as an operator would use it.

Every run a check creates is named `<tag>-<check>` (`tag` = `smoke-<time>-<random>`), so whatever is left
in a team's table is plainly the smoke test's. Every pause is created with a deadline a minute past the
check's own, so even a smoke test killed mid-way leaves nothing waiting for long; `cleanup` stops, answers
or cancels what a failed check left open.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from baton.errors import BatonError, NotFoundError, ValidationFailedError
from baton.notify.model import CHANNELS
from baton.smoke.report import CheckFailedError, CheckResult, CheckSkippedError, SmokeReport, in_words

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.client.sdk import Client
    from baton.contracts import ReviewView, RunView

T = TypeVar("T")
NODE = "smoke"
ANSWER = "smoke-ok"
ENDED = ("succeeded", "failed", "timed_out", "aborted")
INTERRUPTED = "stopped by Ctrl-C: the checks after the last line did not run"
PAUSE_GRACE_SECONDS = 60  # a pause outlives its check by this much, then ends on its own deadline
LOOPBACK = ("127.0.0.1", "localhost", "::1")
# Where a channel's delivery can be seen: the API only knows it published the notification.
DELIVERY_SEEN_AT: dict[str, str] = {
    "console": "the notify_console Lambda's log (locally: the `baton dev` console)",
    "email": "the mailboxes of -c emails (without email_sender each must have confirmed its SNS subscription; "
    "locally: the outbox in the stack's state directory)",
    "webhook": "the receiver at -c webhook_url (its signature checked with the webhook secret)",
    "slack": "the Slack channel of the stored webhook URL",
}


@dataclass
class Waiter:
    """Polls until a probe returns something, within `timeout`: every `interval` for the first `fast_for`
    seconds (the local stack answers within them), then less and less often up to `max_interval` (a long
    wait on a deployment is not hundreds of calls); a progress line every `progress_every` seconds."""

    timeout: float
    progress: Callable[[str], None]
    interval: float = 0.5
    max_interval: float = 5.0
    fast_for: float = 5.0
    progress_every: float = 10.0
    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep

    def until(self, check: str, what: str, probe: Callable[[], T | None]) -> T:
        start = self.monotonic()
        told, interval = start, self.interval
        while True:
            found = probe()
            if found is not None:
                return found
            now = self.monotonic()
            if now - start >= self.timeout:
                raise CheckFailedError(f"timed out after {self.timeout:.0f}s waiting for {what}")
            if now - told >= self.progress_every:
                told = now
                self.progress(f"{check}: still waiting for {what} ({now - start:.0f}s of {self.timeout:.0f}s)")
            self.sleep(min(interval, self.timeout - (now - start)))
            if now - start >= self.fast_for:
                interval = min(interval * 1.5, self.max_interval)


def new_tag(now: datetime | None = None) -> str:
    return f"smoke-{(now or datetime.now(UTC)):%m%d%H%M%S}-{secrets.token_hex(2)}"


def is_loopback(api_url: str) -> bool:
    return (urlsplit(api_url).hostname or "") in LOOPBACK


@dataclass
class SmokeTest:
    client: Client
    waiter: Waiter
    review_branch: str | None = None
    tag: str = field(default_factory=new_tag)
    runs: list[str] = field(default_factory=list)  # every run a check created, for the cleanup
    _asked: tuple[str, str] | None = None  # the ask check's (run, question), answered by the answer check
    _scratch: Path | None = None  # the local review's throwaway repository

    @property
    def pause_seconds(self) -> int:
        return int(self.waiter.timeout) + PAUSE_GRACE_SECONDS

    def run_id(self, check: str) -> str:
        run_id = f"{self.tag}-{check}"
        self.runs.append(run_id)
        return run_id

    def run(self, report: Callable[[CheckResult], None] = lambda _: None) -> SmokeReport:
        result = SmokeReport(api_url=self.client.api_url, tag=self.tag)
        checks: list[tuple[str, Callable[[], str]]] = [
            ("api", self.check_api),
            ("ask", self.check_ask),
            ("answer", self.check_answer),
            ("await gate", self.check_await_gate),
            ("interrupt", self.check_interrupt),
            ("review", self.check_review),
            *((f"notify {channel}", self._notify_check(channel)) for channel in CHANNELS),
        ]
        try:
            for name, check in checks:
                api_failed = bool(result.checks) and result.checks[0].outcome == "failed"
                outcome = self.run_one(name, check, skip_why="not tried: the api check failed" if api_failed else None)
                result.checks.append(outcome)
                report(outcome)
        except KeyboardInterrupt:  # Ctrl-C on a long wait: what was created is still cleaned up
            stopped = CheckResult(name="interrupted", outcome="failed", detail=INTERRUPTED, seconds=0.0)
            result.checks.append(stopped)
            report(stopped)
        result.cleanup = self.cleanup()
        return result

    def run_one(self, name: str, check: Callable[[], str], *, skip_why: str | None = None) -> CheckResult:
        """One check's outcome: ok with what it saw, skipped or failed with why; never an exception."""
        start = time.monotonic()
        if skip_why is not None:
            return CheckResult(name=name, outcome="skipped", detail=skip_why, seconds=0.0)
        try:
            outcome = CheckResult(name=name, outcome="ok", detail=check(), seconds=0.0)
        except CheckSkippedError as why:
            outcome = CheckResult(name=name, outcome="skipped", detail=str(why), seconds=0.0)
        except CheckFailedError as why:
            outcome = CheckResult(name=name, outcome="failed", detail=str(why), seconds=0.0)
        except BatonError as err:  # a call the check did not expect to fail
            outcome = CheckResult(name=name, outcome="failed", detail=in_words(err, "the API"), seconds=0.0)
        outcome.seconds = round(time.monotonic() - start, 2)
        return outcome

    def _call(self, doing: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except BatonError as err:
            raise CheckFailedError(in_words(err, doing)) from err

    # ---- the checks ----------------------------------------------------------------------------------
    def check_api(self) -> str:
        from pydantic import ValidationError

        from baton.contracts import MeView

        answered = self._call("GET /api/me", lambda: self.client.request("GET", "/api/me"))
        try:
            me = MeView.model_validate(answered)
        except ValidationError:
            raise CheckFailedError(f"GET /api/me did not answer as Baton does (got {str(answered)[:120]!r})") from None
        if me.role != "operator":
            raise CheckFailedError(
                f"the caller {me.principal} is an agent (run {me.run_id}); the smoke test answers and resumes, "
                "which only an operator may: use operator credentials"
            )
        return f"reached {self.client.api_url} as operator {me.principal} (via {me.via})"

    def check_ask(self) -> str:
        run_id = self.run_id("ask")
        asked = self._call(
            f"POST /api/runs/{run_id}/questions",
            lambda: self.client.ask_async(
                run_id, NODE, "[baton smoke] Can you read this?", options=[ANSWER], timeout_seconds=self.pause_seconds
            ),
        )
        pending = self._call("GET pending questions", lambda: self.client.pending_questions(run_id))
        if asked.interaction_id not in [q.interaction_id for q in pending]:
            raise CheckFailedError(f"question {asked.interaction_id} was posted but is not listed as pending")
        self._asked = (run_id, asked.interaction_id)
        return f"question {asked.interaction_id} posted to run {run_id} and listed as pending"

    def check_answer(self) -> str:
        if self._asked is None:
            raise CheckSkippedError("the ask check posted no question to answer")
        run_id, iid = self._asked
        answered = self._call(f"POST answer to {iid}", lambda: self.client.answer(run_id, iid, ANSWER))
        if answered.status != "answered":
            raise CheckFailedError(f"the answer was taken as {answered.status!r}, not answered")
        delivered = self._call("drain the node's messages", lambda: self.client.drain_messages(run_id, NODE))
        if not any(m.interaction_id == iid and ANSWER in m.text for m in delivered):
            raise CheckFailedError("the answer was stored but not delivered to the agent's message queue")
        return f"answered {iid}; the agent's drain delivered the answer"

    def check_await_gate(self) -> str:
        run_id = self.run_id("await")
        gate_input = {
            "gate": "smoke_gate",
            "node": NODE,
            "timeout_seconds": self.pause_seconds,
            "questions": [{"question": "[baton smoke] Release the gate?"}],
        }
        self._call(
            "start the await_answers run", lambda: self.client.start_run("await_answers", gate_input, run_id=run_id)
        )
        questions = self.waiter.until(
            "await gate",
            "the run's question",
            lambda: self._unless_ended(run_id, self.client.pending_questions(run_id)),
        )
        self._wait_parked(run_id, "await gate")
        iid = questions[0].interaction_id
        answered = self._call(f"POST answer to {iid}", lambda: self.client.answer(run_id, iid, ANSWER))
        run = self._ended(run_id, "await gate")
        answers = run.output.get("answers") if isinstance(run.output, dict) else None
        first = answers[0] if isinstance(answers, list) and answers else None
        if not isinstance(first, dict) or first.get("answer") != ANSWER:
            raise CheckFailedError(f"the run succeeded without the answer in its output: {str(run.output)[:160]}")
        released = "by the answer" if answered.resumed else "by the reconciler after the answer"
        return f"run {run_id} parked on its gate, was released {released} and succeeded with it"

    def check_interrupt(self) -> str:
        run_id = self.run_id("interrupt")
        body = {"prompt": "[baton smoke] Resume with a value", "timeout_seconds": self.pause_seconds}
        self._call("start the interrupt run", lambda: self.client.start_run("interrupt", body, run_id=run_id))
        pending = self.waiter.until(
            "interrupt",
            "the interrupt to be raised",
            lambda: self._unless_ended(run_id, self.client.list_interrupts(session_id=run_id, status="pending")),
        )
        self._wait_parked(run_id, "interrupt")
        value = {"smoke": self.tag}
        interrupt_id = pending[0].interrupt_id
        self._call(f"resume interrupt {interrupt_id}", lambda: self.client.resume_interrupt(interrupt_id, value))
        run = self._ended(run_id, "interrupt")
        if not isinstance(run.output, dict) or run.output.get("input") != value:
            raise CheckFailedError(f"the run succeeded without the resume value in its output: {str(run.output)[:160]}")
        return f"run {run_id} raised interrupt {interrupt_id}, was resumed with a value and succeeded with it"

    def check_review(self) -> str:
        gate_input: dict[str, object] = {
            "gate": "smoke_review",
            "merge_into": "none",  # the merge runs but touches no branch
            "timeout_seconds": self.pause_seconds,
            "merge_timeout_seconds": self.pause_seconds,
        }
        if self.review_branch:
            gate_input["run_branch"] = self.review_branch
            where = f"branch {self.review_branch} of the deployment's repository"
        elif is_loopback(self.client.api_url):
            from baton.cli.demo_repo import create_demo_repo

            self._scratch = Path(tempfile.mkdtemp(prefix="baton-smoke-repo-"))
            repo = create_demo_repo(self._scratch / "repo", run_branch=f"baton-smoke/{self.tag}")
            gate_input |= {"repo_path": str(repo.path), "run_branch": repo.run_branch, "base_branch": "main"}
            where = f"a throwaway repository's branch {repo.run_branch}"
        else:
            raise CheckSkippedError(
                "no --review-branch given: push a throwaway branch to the deployment's repository "
                "(git push <repository> HEAD:refs/heads/baton-smoke) and pass --review-branch baton-smoke"
            )
        run_id = self.run_id("review")
        try:
            self.client.start_run("review_gate", gate_input, run_id=run_id)
        except ValidationFailedError as err:
            if str(err.details.get("path", "")).endswith("repo_url"):
                raise CheckSkippedError(f"this deployment has no repository configured: {err.message}") from err
            raise CheckFailedError(in_words(err, "start the review_gate run")) from err
        except BatonError as err:
            raise CheckFailedError(in_words(err, "start the review_gate run")) from err
        review = self.waiter.until("review", "the companion's first turn", lambda: self._review_pending(run_id))
        self._call("approve the review", lambda: self.client.review_action(run_id, "approve_merge"))
        run = self._ended(run_id, "review")
        if run.merge_status != "not_merged":  # merge_into none: the build ran and merged nothing, as asked
            raise CheckFailedError(f"the review was approved but its merge ended {run.merge_status}: {run.reason}")
        return (
            f"run {run_id} reviewed {where} ({(review.diff or {}).get('files_changed', '?')} files), "
            "approved; the merge build ran and left every branch as it was"
        )

    def _notify_check(self, channel: str) -> Callable[[], str]:
        def check() -> str:
            run_id = f"{self.tag}-notify"
            if run_id not in self.runs:
                self.runs.append(run_id)
            try:
                asked = self.client.ask_async(
                    run_id,
                    NODE,
                    f"[baton smoke] {channel} notification check",
                    notify=[channel],
                    timeout_seconds=self.pause_seconds,
                )
            except ValidationFailedError as err:
                if err.details.get("channel") == channel:
                    configured = ", ".join(err.details.get("configured") or []) or "none"
                    raise CheckSkippedError(f"not configured on this deployment (configured: {configured})") from err
                raise
            self._call(
                "answer the notification check", lambda: self.client.answer(run_id, asked.interaction_id, ANSWER)
            )
            return (
                f"the API accepted a question for {channel} and published it; delivery cannot be seen from the API: "
                f"look in {DELIVERY_SEEN_AT[channel]}"
            )

        return check

    # ---- waiting -------------------------------------------------------------------------------------
    def _running(self, run_id: str) -> RunView:
        """The run, or the check fails when it ended before it paused."""
        run = self.client.get_run(run_id)
        if run.status in ENDED:
            raise CheckFailedError(f"run {run_id} ended {run.status} before it paused: {run.reason or 'no reason'}")
        return run

    def _unless_ended(self, run_id: str, found: list[T]) -> list[T] | None:
        if found:
            return found
        self._running(run_id)
        return None

    def _wait_parked(self, run_id: str, check: str) -> None:
        def parked() -> bool | None:
            return True if self._running(run_id).status == "paused_waiting_human" else None

        self.waiter.until(check, "the run to park on its gate", parked)

    def _review_pending(self, run_id: str) -> ReviewView | None:
        try:
            review = self.client.review(run_id)
        except NotFoundError:  # the companion has not taken its first turn yet
            review = None
        parked = self._running(run_id).status == "paused_waiting_human"
        return review if review is not None and review.status == "pending" and parked else None

    def _ended(self, run_id: str, check: str) -> RunView:
        def probe() -> RunView | None:
            run = self.client.get_run(run_id)
            return run if run.status in ENDED else None

        run = self.waiter.until(check, f"run {run_id} to end", probe)
        if run.status != "succeeded":
            raise CheckFailedError(f"run {run_id} ended {run.status}: {run.reason or 'no reason given'}")
        return run

    # ---- cleanup -------------------------------------------------------------------------------------
    def cleanup(self) -> list[str]:
        """Stop, answer or cancel whatever a check left open; each line says what (or why it could not)."""
        notes: list[str] = []
        for run_id in self.runs:
            try:
                notes.extend(self._close(run_id))
            except BatonError as err:
                notes.append(f"left run {run_id} as it is: {in_words(err, 'the cleanup')}")
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            notes.append(f"removed the throwaway repository {self._scratch}")
        return notes

    def _close(self, run_id: str) -> list[str]:
        try:
            run = self.client.get_run(run_id)
        except NotFoundError:
            return []
        notes: list[str] = []
        if run.hosted and run.status not in ENDED:
            self.client.stop_run(run_id, reason="baton smoke: cleanup")
            return [f"stopped run {run_id}"]
        for question in self.client.pending_questions(run_id):
            self.client.answer(run_id, question.interaction_id, "baton smoke: cleanup")
            notes.append(f"answered question {question.interaction_id} of run {run_id}")
        for interrupt in self.client.list_interrupts(session_id=run_id, status="pending"):
            self.client.cancel_interrupt(interrupt.interrupt_id, "baton smoke: cleanup")
            notes.append(f"cancelled interrupt {interrupt.interrupt_id} of run {run_id}")
        return notes
