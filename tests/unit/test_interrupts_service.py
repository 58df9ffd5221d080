"""InterruptService on the in-memory store: create, resume with edits, claim, cancel, timeouts, long-poll."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.contracts import CancelInterrupt, ClaimInterrupt, InterruptView, ResumeInterrupt
from baton.contracts.page_tokens import PageCursor, encode_page_token
from baton.domain.interrupt_rules import key_interrupt_id
from baton.domain.interrupt_spec import DEFAULT_TIMEOUT_MS, InterruptSpec
from baton.errors import (
    BadRequestError,
    ConflictError,
    GoneError,
    NotFoundError,
    PayloadTooLargeError,
    ValidationFailedError,
)
from baton.services.claims import ClaimService
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from tests.conftest import FixedClock


class FakeTime:
    """Sleep advances both the service's monotonic clock and the domain clock (no real waiting)."""

    def __init__(self, clock: FixedClock) -> None:
        self.clock = clock
        self.t = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
        self.clock.advance(seconds)

    def monotonic(self) -> float:
        return self.t


@pytest.fixture
def fake_time(clock: FixedClock) -> FakeTime:
    return FakeTime(clock)


@pytest.fixture
def svc(core: Core, fake_time: FakeTime) -> InterruptService:
    return InterruptService(core, sleep=fake_time.sleep, monotonic=fake_time.monotonic)


def _spec(**kw: Any) -> InterruptSpec:
    base: dict[str, Any] = {
        "session_id": "sess-abc",
        "prompt": "Choose deployment target",
        "schema": {"type": "enum", "enum": ["staging", "production"]},
        "state": {"build": {"sha": "abc1234"}, "retries": 1},
        "workflow_id": "deploy",
    }
    base.update(kw)
    return InterruptSpec(**base)


def _events(core: Core, run_id: str = "sess-abc") -> list[str]:
    return [e.type for e in core.store.list_events(run_id)]


def test_create_stores_creates_the_session_and_notifies(svc: InterruptService, core: Core) -> None:
    i, created = svc.create(_spec(notify=["console", "slack"]), caller="agent")
    assert created
    view = InterruptView.of(i)
    assert view["status"] == "pending" and view["sessionId"] == "sess-abc" and view["hosted"] is False
    assert view["schema"] == {"type": "enum", "enum": ["staging", "production"]}
    assert core.require_run("sess-abc").status == "paused_waiting_human"
    assert "human_input_requested" in _events(core)
    sent = core.notifier.notifications  # type: ignore[attr-defined]
    assert [(n.event, n.kind, n.channels, n.options) for n in sent] == [
        ("interrupt_created", "interrupt", ["console", "slack"], ["staging", "production"])
    ]
    assert "resume-interrupt sess-abc" in sent[0].how_to_answer


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ({"session_id": "bad id!"}, BadRequestError),
        ({"prompt": "  "}, ValidationFailedError),  # 422, as the API answers an empty prompt
        ({"schema": {"type": "color"}}, BadRequestError),
        ({"json_schema": {"type": 5}}, BadRequestError),
        ({"state": {"blob": "x" * 70_000}}, PayloadTooLargeError),
        ({"notify": ["console", "pager"]}, ValidationFailedError),
        ({"timeout_ms": 0}, ValidationFailedError),  # 422, as the API answers timeoutMs 0
    ],
)
def test_bad_create_changes_nothing(svc: InterruptService, core: Core, spec: dict[str, Any], error: type) -> None:
    # The spec is the door: a bad field is refused while it is built, before the service does anything.
    with pytest.raises(error):
        svc.create(_spec(**spec), caller="agent")
    assert core.store.get_run("sess-abc") is None and core.store.get_run("bad id!") is None
    assert core.notifier.notifications == []  # type: ignore[attr-defined]


def test_resume_applies_edits_validates_and_records(svc: InterruptService, core: Core) -> None:
    i, _ = svc.create(_spec(), caller="agent")
    result = svc.resume(
        i.interaction_id,
        ResumeInterrupt(input="production", stateEdits=["retries=5", "$.config.featureFlag=true"]),
        caller="alice",
    )
    view = result["interrupt"]
    assert result["resumed"] is True and view["status"] == "answered" and view["resolvedBy"] == "alice"
    assert view["value"] == "production"
    assert view["editedState"] == {"build": {"sha": "abc1234"}, "retries": 5, "config": {"featureFlag": True}}
    assert view["state"] == {"build": {"sha": "abc1234"}, "retries": 1}  # the snapshot itself is kept
    assert "interrupt_resumed" in _events(core)
    assert core.require_run("sess-abc").status == "running"
    with pytest.raises(ConflictError) as second:
        svc.resume(i.interaction_id, ResumeInterrupt(input="staging"), caller="bob")
    assert second.value.details["interrupt"]["value"] == "production"


def test_validation_failure_names_the_path_and_leaves_it_open(svc: InterruptService, core: Core) -> None:
    schema = {"type": "object", "properties": {"port": {"type": "integer", "minimum": 1024}}, "required": ["port"]}
    i, _ = svc.create(_spec(schema=None, json_schema=schema), caller="agent")
    with pytest.raises(ValidationFailedError) as bad_value:
        svc.resume(i.interaction_id, ResumeInterrupt(input={"port": 80}, stateEdits=["retries=2"]), caller="alice")
    assert bad_value.value.details["path"] == "$.port"
    with pytest.raises(ValidationFailedError) as bad_edit:
        svc.resume(
            i.interaction_id,
            ResumeInterrupt(input={"port": 8080}, stateEdits=["retries=2", "build.sha.x=1"]),
            caller="alice",
        )
    assert bad_edit.value.details["path"] == "build.sha.x" and bad_edit.value.details["index"] == 1
    after = svc.get(i.interaction_id)
    assert after.state.status == "pending" and after.state.version == 0 and after.request.state == _spec().state
    ok = svc.resume(i.interaction_id, ResumeInterrupt(input={"port": 8080}, stateEdits=["retries=2"]), caller="alice")
    assert ok["interrupt"]["value"] == {"port": 8080} and ok["interrupt"]["editedState"]["retries"] == 2


def test_json_schema_wins_and_default_fills_missing_input(svc: InterruptService) -> None:
    i, _ = svc.create(_spec(schema={"type": "string"}, json_schema={"type": "integer", "default": 3}), caller="agent")
    with pytest.raises(ValidationFailedError):
        svc.resume(i.interaction_id, ResumeInterrupt(input="text"), caller="alice")
    assert svc.resume(i.interaction_id, ResumeInterrupt(input=None), caller="alice")["interrupt"]["value"] == 3


def test_edits_growing_state_past_the_limit_are_413_and_change_nothing(svc: InterruptService) -> None:
    i, _ = svc.create(_spec(schema=None), caller="agent")
    with pytest.raises(PayloadTooLargeError):
        svc.resume(i.interaction_id, ResumeInterrupt(input=1, stateEdits=["blob=" + "y" * 70_000]), caller="alice")
    assert svc.get(i.interaction_id).state.status == "pending"


def test_claim_rules(svc: InterruptService, core: Core) -> None:
    i, _ = svc.create(_spec(), caller="agent")
    first = ClaimService(svc).claim(i.interaction_id, ClaimInterrupt(), operator="alice")
    assert first["changed"] and first["interrupt"]["claimedBy"] == "alice" and first["interrupt"]["claimedAt"]
    again = ClaimService(svc).claim(i.interaction_id, ClaimInterrupt(), operator="alice")
    assert again["changed"] is False
    with pytest.raises(ConflictError) as taken:
        ClaimService(svc).claim(i.interaction_id, ClaimInterrupt(), operator="bob")
    assert taken.value.details["claimedBy"] == "alice"
    forced = ClaimService(svc).claim(
        i.interaction_id, ClaimInterrupt(force=True, reason="alice is away"), operator="bob"
    )
    assert forced["interrupt"]["claimedBy"] == "bob"
    claims = [e.data for e in core.store.list_events("sess-abc") if e.type == "interrupt_claimed"]
    assert [(c["by"], c.get("previous")) for c in claims] == [("alice", None), ("bob", "alice")]
    svc.resume(i.interaction_id, ResumeInterrupt(input="staging"), caller="carol")  # claims are advisory
    with pytest.raises(ConflictError):
        ClaimService(svc).claim(i.interaction_id, ClaimInterrupt(), operator="alice")


def test_cancel_then_resume_and_claim_are_410(svc: InterruptService, core: Core) -> None:
    i, _ = svc.create(_spec(), caller="agent")
    with pytest.raises(BadRequestError):
        svc.cancel(i.interaction_id, CancelInterrupt(reason="  "), caller="alice")
    result = svc.cancel(i.interaction_id, CancelInterrupt(reason="wrong branch"), caller="alice")
    view = result["interrupt"]
    assert view["status"] == "cancelled" and view["reason"] == "wrong branch" and view["timedOut"] is False
    with pytest.raises(GoneError):
        svc.resume(i.interaction_id, ResumeInterrupt(input="staging"), caller="bob")
    with pytest.raises(GoneError):
        ClaimService(svc).claim(i.interaction_id, ClaimInterrupt(), operator="bob")
    with pytest.raises(GoneError):
        svc.cancel(i.interaction_id, CancelInterrupt(reason="again"), caller="bob")
    assert _events(core).count("interrupt_cancelled") == 1


def test_deadline_is_enforced_by_any_read(svc: InterruptService, core: Core, clock: FixedClock) -> None:
    i, _ = svc.create(_spec(timeout_ms=1500), caller="agent")
    clock.advance(1.0)
    assert svc.get(i.interaction_id).state.status == "pending"
    clock.advance(0.6)
    with pytest.raises(GoneError) as gone:
        svc.resume(i.interaction_id, ResumeInterrupt(input="staging"), caller="alice")
    assert gone.value.details["reason"] == "timeout" and "timed out" in gone.value.message
    view = InterruptView.of(svc.get(i.interaction_id))
    assert view["status"] == "cancelled" and view["reason"] == "timeout" and view["timedOut"] is True
    assert _events(core).count("interrupt_timed_out") == 1


def test_list_filters_and_times_out_expired(svc: InterruptService, clock: FixedClock) -> None:
    a, _ = svc.create(_spec(), caller="agent")
    b, _ = svc.create(_spec(timeout_ms=1000), caller="agent")
    c, _ = svc.create(_spec(session_id="other"), caller="agent")
    svc.resume(a.interaction_id, ResumeInterrupt(input="staging"), caller="alice")
    ids = lambda found: [i.interaction_id for i in found]  # noqa: E731
    assert ids(svc.list_page(status="pending")[0]) == [b.interaction_id, c.interaction_id]
    assert ids(svc.list_page(session_id="sess-abc")[0]) == [a.interaction_id, b.interaction_id]
    assert ids(svc.list_page(status="answered", session_id="sess-abc")[0]) == [a.interaction_id]
    clock.advance(2)
    assert ids(svc.list_page(status="pending", session_id="sess-abc")[0]) == []
    assert ids(svc.list_page(status="cancelled")[0]) == [b.interaction_id]
    with pytest.raises(BadRequestError):
        svc.list_page(status="done")[0]


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_a_cancelled_listing_pages_through_cancels_then_timeouts(
    svc: InterruptService, clock: FixedClock, limit: int
) -> None:
    cancelled = [svc.create(_spec(prompt=f"C{n}"), caller="agent")[0] for n in range(2)]
    timed_out = [svc.create(_spec(prompt=f"T{n}", timeout_ms=1000), caller="agent")[0] for n in range(2)]
    for i in cancelled:
        svc.cancel(i.interaction_id, CancelInterrupt(reason="no"), caller="alice")
    clock.advance(2)
    svc.sweep()
    seen: list[str] = []
    page, token = svc.list_page(status="cancelled", limit=limit)
    while True:
        assert 0 < len(page) <= limit
        seen += [i.interaction_id for i in page]
        if token is None:
            break
        page, token = svc.list_page(status="cancelled", limit=limit, next_token=token)
    assert sorted(seen) == sorted(i.interaction_id for i in cancelled + timed_out)
    first_page_position = encode_page_token(PageCursor(k=None, f=["cancelled", None]), sort_keys=True)
    with pytest.raises(BadRequestError, match="another listing"):
        svc.list_page(status="cancelled", next_token=first_page_position)
    past_the_last_phase = encode_page_token(PageCursor(k=None, f=["cancelled", None], p=2), sort_keys=True)
    with pytest.raises(BadRequestError, match="not a valid page token"):
        svc.list_page(status="cancelled", next_token=past_the_last_phase)


def test_long_poll_returns_on_deadline_without_busy_waiting(svc: InterruptService, fake_time: FakeTime) -> None:
    i, _ = svc.create(_spec(timeout_ms=3200), caller="agent")
    got = svc.get(i.interaction_id, wait_seconds=20)
    view = InterruptView.of(got)  # the API's words: a timed-out interrupt is cancelled with reason timeout
    assert view["status"] == "cancelled" and view["reason"] == "timeout"
    assert 3.2 <= fake_time.t < 3.3 and len(fake_time.sleeps) <= 4  # exactly at the deadline, not later


def test_long_poll_without_change_backs_off_over_the_full_window(svc: InterruptService, fake_time: FakeTime) -> None:
    i, _ = svc.create(_spec(), caller="agent")
    assert svc.get(i.interaction_id, wait_seconds=60).state.status == "pending"  # capped at 20 s
    assert fake_time.t == pytest.approx(20.0) and len(fake_time.sleeps) == 11  # was 40 reads at a fixed 0.5 s
    assert fake_time.sleeps[:5] == [0.5, 0.75, 1.125, 1.6875, 2.5] and max(fake_time.sleeps) == 2.5


def test_long_poll_rereads_by_session_and_id_and_ends_promptly(
    svc: InterruptService, core: Core, fake_time: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    i, _ = svc.create(_spec(), caller="agent")
    reads = {"find": 0, "get": 0}
    find, get = core.store.find_interaction, core.store.get_interaction

    def counting_find(iid: str) -> Any:
        reads["find"] += 1
        return find(iid)

    def counting_get(run_id: str, iid: str) -> Any:
        reads["get"] += 1
        return get(run_id, iid)

    monkeypatch.setattr(core.store, "find_interaction", counting_find)
    monkeypatch.setattr(core.store, "get_interaction", counting_get)
    resolve_at = 7.0
    sleep = fake_time.sleep

    def sleep_and_resolve(seconds: float) -> None:
        before = fake_time.t
        sleep(seconds)
        if before < resolve_at <= fake_time.t:  # an operator resumes during this sleep
            counted = dict(reads)
            InterruptService(core).resume(i.interaction_id, ResumeInterrupt(input="staging"), caller="op")
            reads.update(counted)  # only the long-poll's reads are counted

    monkeypatch.setattr(svc, "_sleep", sleep_and_resolve)
    got = svc.get(i.interaction_id, wait_seconds=20)
    assert got.state.status == "answered"
    assert fake_time.t - resolve_at <= 2.5  # seen at the next re-read: within one (capped) interval
    assert reads["find"] == 1  # the id pointer is resolved once; re-reads are one GetItem each
    assert reads["get"] == len(fake_time.sleeps)  # one (run_id, iid) GetItem per re-read


def test_unknown_id_is_404(svc: InterruptService) -> None:
    with pytest.raises(NotFoundError):
        svc.get("nope")
    with pytest.raises(NotFoundError):
        svc.resume("nope", ResumeInterrupt(input=1), caller="a")


def test_key_makes_create_idempotent(svc: InterruptService) -> None:
    first, created = svc.create(_spec(key="deploy-target"), caller="agent")
    again, created_again = svc.create(_spec(key="deploy-target"), caller="agent")
    assert created and not created_again and again.interaction_id == first.interaction_id
    assert first.interaction_id == key_interrupt_id("sess-abc", "deploy-target")
    with pytest.raises(ConflictError):
        svc.create(_spec(key="deploy-target", prompt="Something else"), caller="agent")


def test_sweep_times_out_only_expired(svc: InterruptService, clock: FixedClock) -> None:
    a, _ = svc.create(_spec(timeout_ms=1000), caller="agent")
    b, _ = svc.create(_spec(timeout_ms=60_000), caller="agent")
    svc.create(_spec(), caller="agent")
    clock.advance(5)
    assert svc.sweep() == [a.interaction_id]
    assert svc.sweep() == []
    assert svc.get(b.interaction_id).state.status == "pending"


def test_hosted_resume_sends_the_token_with_value_and_edited_state(svc: InterruptService, core: Core) -> None:
    i, _ = svc.create(_spec(timeout_ms=60_000, node="gate"), caller="workflow", token="tok-1")
    assert InterruptView.of(i)["hosted"] is True
    svc.resume(i.interaction_id, ResumeInterrupt(input="staging", stateEdits=["retries=3"]), caller="alice")
    kind, token, output = core.tokens.sent[-1]  # type: ignore[attr-defined]
    assert (kind, token) == ("success", "tok-1")
    assert output["input"] == "staging" and output["state"]["retries"] == 3 and output["resolved_by"] == "alice"
    # The whole output, keys in order, as the hosted state machine reads it (a typed InterruptOutput).
    assert json.dumps(output) == json.dumps(
        {
            "interrupt_id": i.interaction_id,
            "input": "staging",
            "state": {"build": {"sha": "abc1234"}, "retries": 3},
            "state_edits": ["retries=3"],
            "resolved_by": "alice",
            "resolved_at": output["resolved_at"],
        }
    )
    assert isinstance(output["resolved_at"], str)


def test_hosted_cancel_fails_the_task_and_the_catch_builds_the_cause(svc: InterruptService, core: Core) -> None:
    i, _ = svc.create(_spec(timeout_ms=60_000, node="gate"), caller="workflow", token="tok-2")
    result = svc.cancel(i.interaction_id, CancelInterrupt(reason="not today"), caller="alice")
    assert result["workflowFailed"] is True
    assert core.tokens.sent[-1][0:2] == ("failure", "tok-2")  # type: ignore[attr-defined]
    assert core.tokens.sent[-1][2]["error"] == "InterruptCancelled"  # type: ignore[attr-defined]
    ended = svc.hosted_ended("sess-abc", "gate", "cancelled")
    assert "cancelled by alice: not today" in ended.cause


def test_hosted_timeout_marks_it_and_says_so(svc: InterruptService, core: Core) -> None:
    i, _ = svc.create(_spec(timeout_ms=2000, node="gate"), caller="workflow", token="tok-3")
    ended = svc.hosted_ended("sess-abc", "gate", "timeout")
    assert "timed out after 2s" in ended.cause and ended.interrupt_id == i.interaction_id
    assert InterruptView.of(svc.get(i.interaction_id))["timedOut"] is True
    assert core.require_run("sess-abc").status == "failed"
    with pytest.raises(GoneError):
        svc.resume(i.interaction_id, ResumeInterrupt(input="staging"), caller="alice")


def test_without_timeout_the_default_deadline_applies(svc: InterruptService, clock: FixedClock) -> None:
    i, _ = svc.create(_spec(), caller="agent")
    assert InterruptView.of(i)["timeoutMs"] == DEFAULT_TIMEOUT_MS == 86_400_000 and i.expires_at is not None
    clock.advance(86_400)
    assert svc.sweep() == [i.interaction_id]  # every pause ends


@pytest.mark.parametrize("hosted", [False, True])
def test_run_is_paused_before_the_interrupt_is_visible(
    svc: InterruptService, core: Core, monkeypatch: pytest.MonkeyPatch, hosted: bool
) -> None:
    core.ensure_run("sess-abc")
    seen: list[str] = []
    put = core.store.put_interaction_indexed

    def observing_put(interaction: Any) -> None:
        seen.append(core.require_run("sess-abc").status)
        put(interaction)

    monkeypatch.setattr(core.store, "put_interaction_indexed", observing_put)
    extra: dict[str, Any] = {"token": "tok-9"} if hosted else {}
    svc.create(_spec(timeout_ms=60_000, node="gate"), caller="agent", **extra)
    assert seen == ["paused_waiting_human"]
