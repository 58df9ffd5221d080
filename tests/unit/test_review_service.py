"""The review gate's domain on in-memory ports: companion turns, the operator's actions and their
validation (as HTTP statuses through the real resolver), the merge outcome on the run summary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.adapters.merge_runners import CodeBuildBuildRunner, build_command
from baton.api import deps
from baton.api.app import create_app
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.domain.merge_contracts import BoundedDiff, BuildRecord, BuildReport, BuildRequest, MergeOutcome
from baton.domain.review_decision import ReviewDecision
from baton.domain.review_gate import parse_gate_config, resolve_review_url
from baton.errors import ConflictError, NotFoundError, ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.models import status_of
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.audit import AuditService
from baton.services.core import Core
from baton.services.review import ReviewService
from baton.services.runs import RunService
from tests.fakes import MemoryBuildRecords, RecordingBuildRunner, RecordingTaskTokens

TOKEN = "local-secret"


@pytest.fixture
def runner() -> RecordingBuildRunner:
    return RecordingBuildRunner()


@pytest.fixture
def records() -> MemoryBuildRecords:
    return MemoryBuildRecords()


@pytest.fixture
def review(core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords) -> ReviewService:
    return ReviewService(
        core,
        companion=OfflineCompanion,
        runner=lambda: runner,
        records=records,
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepo:
    return create_demo_repo(tmp_path / "repo")


def _sent(core: Core) -> list[tuple[str, str, Any]]:
    tokens = core.tokens
    assert isinstance(tokens, RecordingTaskTokens)
    return tokens.sent


def test_demo_repo_has_main_checked_out_and_a_run_branch(repo: DemoRepo) -> None:
    assert repo.base_branch == "main" and len(repo.commits) == 3
    assert repo.gate_input()["repo_path"] == str(repo.path)


def test_config_refusals_are_one_readable_sentence() -> None:
    with pytest.raises(ValidationFailedError, match=r"no repository to merge.*repo_path"):
        parse_gate_config({"run_branch": "b"}, merge_runner="local")
    with pytest.raises(ValidationFailedError, match="no repository to merge: set run_branch"):
        parse_gate_config({"repo_path": "/tmp/x"}, merge_runner="local")
    deployed = {"merge_runner": "codebuild", "merge_repository": REPO_URL}
    parse_gate_config({"run_branch": "b"}, **deployed)  # deployed: the project has the repo
    with pytest.raises(ValidationFailedError, match="merge_strategy"):
        parse_gate_config({"run_branch": "b", "merge_strategy": "rebase"}, **deployed)
    with pytest.raises(ValidationFailedError, match="merge_stratgy"):
        parse_gate_config({"run_branch": "b", "merge_stratgy": "squash"}, **deployed)
    with pytest.raises(ValidationFailedError, match="output_schema"):
        parse_gate_config({"run_branch": "b", "output_schema": {"type": "nope"}}, **deployed)


REPO_URL = "https://git-codecommit.eu-west-1.amazonaws.com/v1/repos/agent-work"


@pytest.mark.parametrize("merge_into", ["current", "none", "release"])
def test_deployed_gate_without_a_repository_is_refused(merge_into: str) -> None:
    """CodeBuild runner, no repository deployed (-c repository unset) and no repo_url: refused before it
    starts, whatever merge_into says (the run branch must be fetched from somewhere)."""
    config = {"run_branch": "b", "merge_into": merge_into}
    with pytest.raises(ValidationFailedError, match=r"no repository to merge.*-c repository=.*repo_url") as err:
        parse_gate_config(config, merge_runner="codebuild")
    assert err.value.details == {"path": "repo_url"}
    with pytest.raises(ValidationFailedError, match="no repository to merge"):
        parse_gate_config(config, merge_runner="codebuild", merge_repository="  ")
    assert parse_gate_config(config, merge_runner="codebuild", merge_repository=REPO_URL).merge_into == merge_into
    assert parse_gate_config({**config, "repo_url": REPO_URL}, merge_runner="codebuild").repo_url == REPO_URL


def test_review_url_template() -> None:
    scope = {"run_id": "r1", "outputs": {"deploy": {"url": "https://x"}}, "input": {}}
    assert resolve_review_url("{outputs.deploy.url}/r/{run_id}", scope) == ("https://x/r/r1", [])
    assert resolve_review_url("", scope) == ("", [])
    url, warnings = resolve_review_url("https://h/{outputs.preview}", scope)
    assert url == "" and "unknown output 'outputs.preview'" in warnings[0]


def test_first_turn_refuses_a_gate_without_repository(review: ReviewService, core: Core) -> None:
    result = review.first_turn("r1", {"gate": "ship", "run_branch": "b"})
    assert result["ok"] is False and "no repository to merge" in result["cause"]
    assert core.store.list_run_interactions("r1") == []
    run = core.store.get_run("r1")
    assert run is not None and run.status == "failed" and "repo_path" in (run.reason or "")


def test_deployed_first_turn_refuses_without_a_repository_before_any_pause(
    core: Core, records: MemoryBuildRecords
) -> None:
    from baton.runtime.settings import Settings
    from baton.runtime.wiring import build_review_service

    settings = Settings(BATON_TABLE_NAME="t", BATON_MERGE_RUNNER="codebuild", BATON_MERGE_PROJECT="p")
    deployed = build_review_service(settings, core, records=records)
    result = deployed.first_turn("r1", {"gate": "ship", "run_branch": "b", "merge_into": "none"})
    assert result["ok"] is False and "-c repository=" in result["cause"]
    assert core.store.list_run_interactions("r1") == []
    run = core.store.get_run("r1")
    assert run is not None and run.status == "failed"

    # With BATON_MERGE_REPOSITORY (set by the CDK stack from -c repository=...) the gate starts.
    with_repo = Settings.from_env(
        {"BATON_TABLE_NAME": "t", "BATON_MERGE_RUNNER": "codebuild", "BATON_MERGE_REPOSITORY": REPO_URL}
    )
    # The deployed gate reads the diff its diff build wrote into the table (here: written as the build would).
    diff = BoundedDiff(
        base="a" * 40, head="b" * 40, text="diff --git a/x b/x\n", truncated=False, total_bytes=19, shown_bytes=19,
        files_changed=1, insertions=1, deletions=0, files=["x"],
    )  # fmt: skip
    records.put_build(
        BuildRecord(run_id="r2", gate="ship", kind="diff", build_key="k1", task_token="tok-d", started_at=core.now())
    )
    records.put_report(BuildReport(run_id="r2", gate="ship", kind="diff", build_key="k1", diff=diff))
    started = build_review_service(with_repo, core, records=records)
    assert started.first_turn("r2", {"gate": "ship", "run_branch": "b"})["ok"] is True
    assert started.view("r2")["diff"]["files"] == ["x"]  # GET .../review shows the deployed diff's stats


def test_full_dialogue_and_merge_on_memory_ports(
    review: ReviewService, core: Core, runner: RecordingBuildRunner, records: MemoryBuildRecords, repo: DemoRepo
) -> None:
    first = review.first_turn("r1", repo.gate_input(max_turns=3))
    assert first["ok"] is True and first["auto_merge"] is False and first["gate"] == "ship_review"
    review.park("r1", "ship_review", "tok-1")
    view = review.view("r1")
    assert view["status"] == "pending" and view["turns_used"] == 1 and view["diff"]["files_changed"] == 3

    out = review.act("r1", ReviewDecision(action="reply", reply="tests pass"), caller="op")
    assert out["resumed"] is True and _sent(core)[-1][2]["action"] == "reply"
    assert review.reply_turn("r1", "ship_review")["auto_merge"] is False
    review.park("r1", "ship_review", "tok-2")
    view = review.view("r1")
    assert [t["role"] for t in view["thread"]] == ["companion", "operator", "companion"]

    review.act(
        "r1",
        ReviewDecision.from_answers(
            {"__review_action": "approve_merge", "__review_merge_strategy": "merge", "__review_message": "m"}
        ),
        caller="op",
    )
    review.start_merge("r1", "ship_review", "tok-3")
    request = runner.started[-1]
    assert request.kind == "merge" and request.strategy == "merge" and request.message == "m"
    assert request.repo_path == str(repo.path) and request.run_branch == repo.run_branch
    # The token stays with Baton: parked in the build's record, never in what the build is given.
    record = records.get_build("r1", "ship_review", "merge")
    assert record is not None and record.task_token == "tok-3" and record.build_key == request.build_key
    assert "tok-3" not in json.dumps(request.environment())

    ran = {"strategy": "squash", "run_branch": repo.run_branch, "run_head": "abc"}
    rejected = review.record_merge(
        "r1",
        "ship_review",
        outcome=MergeOutcome(merge_status="rejected", reason="dirty", reject_code="dirty_tree", **ran),
    )
    assert rejected["status"] == "rejected" and review.view("r1")["status"] == "pending"
    review.park("r1", "ship_review", "tok-4")
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    merged = review.record_merge(
        "r1",
        "ship_review",
        outcome=MergeOutcome(
            merge_status="merged", final_commit="abc", final_branch="main", merged_into="main", reason="ok", **ran
        ),
    )
    assert merged["status"] == "merged" and merged["action"] == "approve_merge"
    run = core.store.get_run("r1")
    assert run is not None and (run.final_commit, run.merge_status, run.merged_into) == ("abc", "merged", "main")
    types = [e.type for e in core.store.list_events("r1", limit=500)]
    for expected in ("review_turn", "review_verdict", "review_merge_rejected", "review_merged"):
        assert expected in types


def test_an_action_stored_before_the_token_is_parked_is_delivered_at_park(
    review: ReviewService, core: Core, repo: DemoRepo
) -> None:
    review.first_turn("r1", repo.gate_input())
    result = review.act("r1", ReviewDecision(action="request_changes"), caller="op")
    assert result["resumed"] is False  # nothing parked yet; the action is stored
    parked = review.park("r1", "ship_review", "tok-1")
    assert parked["delivered"] is True
    assert _sent(core)[-1][1] == "tok-1" and _sent(core)[-1][2]["action"] == "request_changes"
    assert _sent(core)[-1][2]["verdict"] == review.view("r1").verdict is not None  # the companion's, as parked


def test_second_action_while_busy_is_409_and_unknown_run_404(review: ReviewService, repo: DemoRepo) -> None:
    review.first_turn("r1", repo.gate_input())
    review.park("r1", "ship_review", "tok-1")
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    with pytest.raises(ConflictError, match="not waiting for the operator"):
        review.act("r1", ReviewDecision(action="force_merge"), caller="op2")
    with pytest.raises(NotFoundError):
        review.view("nope")


def test_agent_verdict_ok_auto_merges_only_at_or_above_the_threshold(review: ReviewService, repo: DemoRepo) -> None:
    assert review.first_turn("hi", repo.gate_input(posture="agent_verdict_ok", confidence_threshold=0.5))["auto_merge"]
    assert not review.first_turn("lo", repo.gate_input(posture="agent_verdict_ok", confidence_threshold=0.99))[
        "auto_merge"
    ]
    assert not review.first_turn("hr", repo.gate_input(confidence_threshold=0.1))["auto_merge"]  # human_required


def test_an_auto_merge_is_stored_with_its_chained_event_pinning_the_turn_s_commit(
    review: ReviewService, core: Core, repo: DemoRepo
) -> None:
    assert review.first_turn("hi", repo.gate_input(posture="agent_verdict_ok", confidence_threshold=0.5)).auto_merge
    merged = review.view("hi")
    assert merged.status == "answered" and merged.last_action is not None
    assert merged.last_action["action"] == "auto_merge" and merged.last_action["reviewed_head"] == repo.run_head
    [event] = [e for e in core.store.list_events("hi", limit=500) if e.type == "review_auto_merge"]
    assert event.data["reviewed_head"] == repo.run_head == merged.reviewed_head
    assert AuditService(core.store).verify("hi").valid


def test_build_command_and_codebuild_overrides_carry_no_token() -> None:
    request = BuildRequest(
        run_id="r", gate="g", kind="merge", build_key="k", run_branch="b", strategy="squash", message="hi"
    )
    assert build_command()[1:] == ["-m", "baton.merge.build"]

    class FakeCodeBuild:
        def start_build(self, **kwargs: Any) -> dict[str, Any]:
            self.kwargs = kwargs
            return {"build": {"id": "proj:1"}}

    client = FakeCodeBuild()
    assert CodeBuildBuildRunner(client, "proj").start(request) == "proj:1"  # type: ignore[arg-type]
    env = {v["name"]: v["value"] for v in client.kwargs["environmentVariablesOverride"]}
    assert not any("TOKEN" in name for name in env)
    assert env["BATON_RUN_BRANCH"] == "b" and env["BATON_BUILD_KIND"] == "merge" and env["BATON_BUILD_KEY"] == "k"
    assert env["BATON_MERGE_INTO"] == "current" and env["BATON_MERGE_STRATEGY"] == "squash"
    assert "BATON_REPO_URL" not in env  # the project's repository unless the gate names its own
    assert BuildRequest.from_environment(env) == request


# ---- through the HTTP resolver ---------------------------------------------------------------------


@pytest.fixture
def api(core: Core, review: ReviewService) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core), review=review)
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, body: Any = None) -> Any:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
        data = json.dumps(body) if body is not None else ""
        result = app.resolve(to_proxy_event(method, path, headers, data.encode(), "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def test_bad_review_input_is_a_clear_4xx(api: Any, review: ReviewService, repo: DemoRepo) -> None:
    review.first_turn("r1", repo.gate_input(max_turns=1))
    review.park("r1", "ship_review", "tok-1")

    def resume(answers: dict[str, Any]) -> tuple[int, Any]:
        status, body = api("POST", "/api/runs/r1/resume", {"answers": answers})
        return status, body

    status, body = resume({"__review_action": "ship_it"})
    assert status == 422 and body["allowed"] == ["reply", "approve_merge", "force_merge", "request_changes"]
    status, body = resume({"__review_action": "reply"})
    assert status == 422 and "needs text" in body["message"]
    status, body = resume({"__review_action": "approve_merge", "__review_merge_strategy": "rebase"})
    assert status == 422 and body["allowed"] == ["squash", "merge"]
    status, body = resume({"__review_action": "approve_merge", "__review_colour": "red"})
    assert status == 422 and "__review_colour" in body["message"]
    status, body = resume({"__review_action": "reply", "__review_reply": "one more?"})
    assert status == 409 and "max_turns" in body["message"]  # max_turns=1: the first turn used it

    status, body = api("GET", "/api/runs/r1/review")
    assert status == 200 and body["allowed_actions"] == ["approve_merge", "force_merge", "request_changes"]
    assert body["thread"][0]["role"] == "companion" and body["merge"]["merge_status"] is None
    status, body = resume({"__review_action": "approve_merge"})
    assert status == 200 and body["resumed"] is True
    status, body = api("GET", "/api/runs/nope/review")
    assert status == 404


def test_a_merge_that_did_not_run_reopens_and_a_merge_timeout_fails_the_run(
    review: ReviewService, core: Core, repo: DemoRepo
) -> None:
    from baton.domain.gate_payloads import MergeRecordPayload

    review.first_turn("r1", repo.gate_input())
    review.park("r1", "ship_review", "tok-1")
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    event = {"run_id": "r1", "gate": "ship_review", "error": {"Error": "MergeCrashed", "Cause": "x" * 3000}}
    request = MergeRecordPayload.model_validate(event)  # the merge_record Lambda's payload, as the ASL sends it
    out = review.record_merge("r1", "ship_review", outcome=request.outcome, error=request.error)
    prefix = "the merge did not run: MergeCrashed: "
    assert out["status"] == "rejected" and out["cause"] == prefix + "x" * 2000
    assert out["merge"]["merge_status"] == "rejected" and out["merge"]["strategy"] is None
    assert review.view("r1")["status"] == "pending"

    review.park("r1", "ship_review", "tok-2")
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    timed_out = MergeRecordPayload.model_validate({**event, "error": {"Error": "States.Timeout"}})
    out = review.record_merge("r1", "ship_review", error=timed_out.error)
    assert out["status"] == "timed_out" and "did not report within" in out["cause"]
    run = core.store.get_run("r1")
    assert run is not None and run.status == "failed" and run.merge_status == "timed_out"


def test_a_merge_timeout_after_the_runs_end_records_it_and_leaves_the_run_ended(
    review: ReviewService, core: Core, repo: DemoRepo
) -> None:
    """The run fails with its merge's timeout in one write; a run that ended meanwhile keeps its end (the
    merge status and the event are written without the move)."""
    from baton.domain.gate_payloads import MergeRecordPayload

    review.first_turn("r1", repo.gate_input())
    review.park("r1", "ship_review", "tok-1")
    review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    core.store.update_run("r1", {"status": "aborted"})  # stopped while its merge ran
    event = {"run_id": "r1", "gate": "ship_review", "error": {"Error": "States.Timeout"}}
    out = review.record_merge("r1", "ship_review", error=MergeRecordPayload.model_validate(event).error)
    assert out["status"] == "timed_out"
    run = core.store.get_run("r1")
    assert run is not None and run.status == "aborted" and run.merge_status == "timed_out"
    assert [e.type for e in core.store.list_events("r1")].count("review_merge_timed_out") == 1


def test_the_stored_action_keeps_its_json_keys_in_order(review: ReviewService, repo: DemoRepo) -> None:
    """The action as stored (`state.answer`, dumped to JSON in the table) names the same keys in the same
    order: a reply names no commit, a decision the commit, diff and reason, an auto-merge no reason."""
    review.first_turn("r1", repo.gate_input(max_turns=3))
    review.park("r1", "ship_review", "tok-1")
    review.act("r1", ReviewDecision(action="reply", reply="tests pass"), caller="op")
    reply = {"action": "reply", "reply": "tests pass", "message": None, "merge_strategy": "squash", "by": "op"}
    assert json.dumps(_stored_answer(review, "r1")) == json.dumps(reply)
    review.reply_turn("r1", "ship_review")
    review.park("r1", "ship_review", "tok-2")
    view = review.view("r1")
    review.act("r1", ReviewDecision(action="request_changes", reason="no"), caller="op")
    decided = {
        "action": "request_changes",
        "reply": None,
        "message": None,
        "merge_strategy": "squash",
        "by": "op",
        "reviewed_head": view.reviewed_head,
        "diff_digest": view.diff_digest,
        "reason": "no",
    }
    assert json.dumps(_stored_answer(review, "r1")) == json.dumps(decided)
    review.first_turn("r2", repo.gate_input(posture="agent_verdict_ok", confidence_threshold=0.5))
    assert list(_stored_answer(review, "r2")) == [
        "action",
        "reply",
        "message",
        "merge_strategy",
        "by",
        "reviewed_head",
        "diff_digest",
    ]


def test_an_action_that_loses_the_race_is_409_naming_the_winner(
    review: ReviewService, core: Core, repo: DemoRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another operator's action stored between this one's read and its write: the write loses (nothing of
    it is stored or sent) with the 409 naming the action that won."""
    review.first_turn("r1", repo.gate_input())
    review.park("r1", "ship_review", "tok-1")
    store, list_turns = review.core.store, review.core.store.list_turns

    def first_another_acts(run_id: str, interaction_id: str) -> Any:
        turns = list_turns(run_id, interaction_id)
        monkeypatch.setattr(store, "list_turns", list_turns)
        review.act(run_id, ReviewDecision(action="request_changes"), caller="op2")
        return turns

    monkeypatch.setattr(store, "list_turns", first_another_acts)
    with pytest.raises(ConflictError, match=r"not waiting for the operator \(last action: request_changes") as lost:
        review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    assert lost.value.details["interaction"]["answered_by"] == "op2"
    assert _stored_answer(review, "r1")["by"] == "op2"
    assert [(token, out["action"]) for _, token, out in _sent(core)] == [("tok-1", "request_changes")]


def test_an_action_whose_review_changed_under_it_but_still_waits_is_told_to_send_again(
    review: ReviewService, core: Core, repo: DemoRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    review.first_turn("r1", repo.gate_input())
    review.park("r1", "ship_review", "tok-1")
    store, list_turns = core.store, core.store.list_turns

    def changed_meanwhile(run_id: str, interaction_id: str) -> Any:
        current = store.get_interaction(run_id, interaction_id)
        assert current is not None
        store.transition_interaction(current, status_of(current.state, "pending"))  # a new version, still pending
        return list_turns(run_id, interaction_id)

    monkeypatch.setattr(store, "list_turns", changed_meanwhile)
    with pytest.raises(ConflictError, match="changed while this action was written; send it again"):
        review.act("r1", ReviewDecision(action="approve_merge"), caller="op")
    assert _stored_answer(review, "r1") is None and _sent(core) == []


def _stored_answer(review: ReviewService, run_id: str) -> Any:
    latest = review._latest(run_id)
    assert latest is not None
    return latest.state.answer
