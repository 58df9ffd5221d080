"""`baton smoke`'s pieces that need no stack: every wait ends at its timeout with progress lines on the way
(a smoke test never hangs), and an API error reads as a sentence (baton/smoke/)."""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, cast

import pytest

from baton.client.transport import ApiUnavailableError
from baton.errors import ForbiddenError, NotFoundError, ValidationFailedError
from baton.smoke.checks import SmokeTest, Waiter, is_loopback, new_tag
from baton.smoke.report import CheckFailedError, CheckResult, in_words

if TYPE_CHECKING:
    from baton.client.sdk import Client


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_a_wait_that_never_ends_fails_at_its_timeout_with_progress_lines_on_the_way() -> None:
    clock, lines = FakeClock(), list[str]()
    waiter = Waiter(timeout=60, progress=lines.append, monotonic=clock.monotonic, sleep=clock.sleep)
    with pytest.raises(CheckFailedError, match=r"^timed out after 60s waiting for the run to park$"):
        waiter.until("await gate", "the run to park", lambda: None)
    assert clock.now == pytest.approx(60)
    assert clock.sleeps[:13] == pytest.approx([0.5] * 11 + [0.75, 1.125])  # fast for 5 s, then less often
    assert max(clock.sleeps) == 5.0  # but at least every 5 s
    said = [re.fullmatch(r"await gate: still waiting for the run to park \((\d+)s of 60s\)", line) for line in lines]
    at = [int(match.group(1)) for match in said if match]
    assert len(at) == len(lines) >= 4
    assert at[0] <= 15 and all(10 <= later - earlier <= 15 for earlier, later in itertools.pairwise(at))


def test_a_wait_returns_what_its_probe_found() -> None:
    clock, seen = FakeClock(), iter([None, None, "parked"])
    waiter = Waiter(timeout=10, progress=lambda _: None, monotonic=clock.monotonic, sleep=clock.sleep)
    assert waiter.until("interrupt", "it", lambda: next(seen)) == "parked"
    assert clock.sleeps == pytest.approx([0.5, 0.5])


def test_an_api_gateway_refusal_reads_as_a_sentence_with_what_to_check() -> None:
    err = ForbiddenError("User: arn:aws:iam::1:user/x is not authorized to perform: execute-api:Invoke")
    err.http_status = 403
    words = in_words(err, "GET /api/me")
    assert words.startswith("GET /api/me answered 403 (forbidden): User: arn:aws:iam::1:user/x is not authorized")
    assert "check that AWS credentials are set and allowed execute-api:Invoke" in words


def test_an_html_error_page_is_one_short_line() -> None:
    err = NotFoundError("<html>\n<head><title>404</title></head>\n<body>" + "Not Found " * 50 + "</body></html>")
    err.http_status = 404
    words = in_words(err, "GET /api/me")
    assert "\n" not in words and "<html" not in words and "</body>" not in words
    assert words.startswith("GET /api/me answered 404 (not_found): 404 Not Found Not Found")
    assert "…; nothing answers at this path" in words


def test_an_unreachable_api_keeps_the_transport_sentence() -> None:
    err = ApiUnavailableError("cannot reach the Baton API at http://127.0.0.1:9: [Errno 111] Connection refused")
    assert in_words(err, "GET /api/me") == err.message


def test_smoke_run_ids_are_tagged_and_the_local_review_needs_a_loopback_api() -> None:
    tag = new_tag()
    assert tag.startswith("smoke-") and len(f"{tag}-interrupt") <= 60  # fits an agent session name
    assert is_loopback("http://127.0.0.1:4566") and is_loopback("http://localhost:8080/")
    assert not is_loopback("https://abc123.execute-api.eu-west-1.amazonaws.com/live")


class DeployedApi:
    """A deployed API as the review check meets it: only `start_run` is reached, and it refuses like a stack
    without `-c repository` (baton/domain/review_gate.py)."""

    api_url = "https://abc123.execute-api.eu-west-1.amazonaws.com/live"

    def __init__(self) -> None:
        self.started: list[dict[str, object]] = []

    def start_run(self, workflow: str, gate_input: dict[str, object], *, run_id: str) -> None:
        self.started.append(gate_input)
        raise ValidationFailedError(
            "input: review gate 'smoke_review' has no repository to merge: this deployment has no repository "
            "(deploy with -c repository=<https URL>) and the gate sets no repo_url",
            details={"path": "input.repo_url"},
        )


def _review(api: DeployedApi, branch: str | None) -> CheckResult:
    smoke = SmokeTest(cast("Client", api), Waiter(timeout=5, progress=lambda _: None), review_branch=branch)
    return smoke.run_one("review", smoke.check_review)


def test_the_review_check_on_a_deployment_says_why_it_is_skipped() -> None:
    api = DeployedApi()
    no_branch = _review(api, None)
    assert no_branch.outcome == "skipped" and "pass --review-branch" in no_branch.detail
    assert api.started == []  # nothing started without a branch to review
    no_repository = _review(api, "baton-smoke")
    assert no_repository.outcome == "skipped"
    assert no_repository.detail.startswith("this deployment has no repository configured")
    assert "-c repository=" in no_repository.detail
    assert api.started[0]["run_branch"] == "baton-smoke" and api.started[0]["merge_into"] == "none"


def test_ctrl_c_mid_check_still_cleans_up_and_reports_a_failure() -> None:
    smoke = SmokeTest(cast("Client", DeployedApi()), Waiter(timeout=5, progress=lambda _: None))
    cleaned: list[str] = []

    def interrupted() -> str:
        raise KeyboardInterrupt

    def cleanup() -> list[str]:
        cleaned.append("cleaned")
        return ["nothing was left open"]

    smoke.check_api = interrupted  # type: ignore[method-assign]
    smoke.cleanup = cleanup  # type: ignore[method-assign]
    report = smoke.run()
    assert [(c.name, c.outcome) for c in report.checks] == [("interrupted", "failed")]
    assert report.checks[0].detail.startswith("stopped by Ctrl-C")
    assert cleaned == ["cleaned"] and report.cleanup == ["nothing was left open"]
