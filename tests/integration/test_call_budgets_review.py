"""AWS calls of a review gate's whole life, operation by operation, against declared budgets (counts, never
timings): the diff build started, reported and ended, the companion's first turn, the park, an operator's
reply with the diff built again and the companion's next turn, the park again, approve, the merge build
started (CodeBuild `StartBuild`), reported and ended (the callback `build_finished` gets), the merge's
record, the run's end (each park's deadline timer stopped by its release); then force, request_changes
and a stop (the cancel, its park's timer stopped with it) on lives of their own. A sibling of
test_call_budgets_lives.py (its `CallsNamed` names the code behind each call); bench/parts/cost_model.py
prices the same life (`Lives.review`).

The gate runs as deployed: the state machine on moto's Step Functions engine, every Lambda the engine
invokes through the real handlers, the builds started with `CodeBuildBuildRunner` on moto's CodeBuild.
moto's CodeBuild starts no container, so the build itself (`python -m baton.merge.build`: the same
`main`) runs here with the environment StartBuild was given, against a bare clone of a throwaway
repository (its `repo_url`, as a deployed gate clones), and its end is the EventBridge event CodeBuild
would send, handed to `build_finished`. The build's own call (its report's PutItem) is Baton's code in
CodeBuild, not a Lambda's: budgeted apart, as the cost model leaves it out."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from baton.cli.demo_repo import create_demo_repo
from baton.local.moto_fixes import sfn_stop_execution
from baton.merge.build import main as run_build_main
from baton.merge.gitcmd import run_git
from baton.runtime.settings import get_settings
from baton.runtime.wiring import services
from baton.services.audit import AuditService
from tests.conftest import wait_for
from tests.integration.test_call_budgets_lives import CallsNamed
from tests.integration.test_call_budgets_question_life import api, hooked, invoke, run_end, timer_statuses

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

PROJECT = "baton-merge"
GATE = "ship_review"

# Each operation's handler invocation ("<handler> <n>": its n-th in the life) and its budget: the exact count
# it makes. A change that adds or removes a call fails here: say why and set the number in the same commit.
# "(cut: ...)" names a call the operation could do without (issue 33), left for a change of its own.
START_THE_DIFF = 2  # the build's record holding the task token (PutItem), CodeBuild's StartBuild
# the build's record claimed running -> finished (one conditional UpdateItem returning it; was 4: a GetItem
# first), its report (GetItem), the token sent (SendTaskSuccess)
BUILD_END = 3
PARK = 7  # the same park the first time and after every reply; its calls:
# the wait (GetItem: a retried invoke?), the run's reviews (Query), the turns (Query: the verdict and turns
# used the event and the notification show), the wait parked with its mark, the run paused,
# `human_input_requested` and `run_paused` (one transaction; was 10: the run's UpdateItem and a PutItem
# each event), the deadline timer (StartExecution), the interaction again (GetItem: an action stored
# before the park?), the notification (SNS)
APPROVE = 9  # an operator's action that merges (approve_merge, force_merge); its calls:
# (was 12: the run read first, and the turns again for the output; was 11: the action stored, then its
# event chained after a head read of its own) the run's reviews (Query: one proves the run; no review: the
# run's GetItem for a 404, else a 409), the wait and the decision log's head (one BatchGetItem: past its
# deadline? what the decision chains after), the turns (Query: what the action may do), the action stored
# with `interaction_answered` (one transaction, as every other kind decides), the wait again (GetItem,
# `release_gate`: cut by handing it the wait read above once the deciding write is guarded by it), the
# send (SendTaskSuccess), the run's waits (Query: does another branch hold the run?), the release with
# `run_resumed` (one transaction), the gate's timer stopped (StopExecution: firing, it would cost a
# gate_deadline invocation and the wait's GetItem)
REPLY = APPROVE + 1  # the same, and the reply as a turn of the dialogue with its event (one transaction; was
# a PutItem each)
REJECT = APPROVE  # request_changes: the same calls (the gate ends at its Pass state: no build)
MERGE_RECORD = 4  # the run's reviews (Query), the turns (Query: the verdict the output carries), the decision
# log's head (GetItem), the run's merge fields with `review_merged` chained after that head (one transaction;
# was 5: the merge fields were an UpdateItem of their own)
RUN_END = 3  # the run (GetItem), its end with `run_succeeded` (one transaction), the notification (SNS)

REVIEW: dict[str, tuple[str, int]] = {
    "the diff build started (Diff)": ("diff_start 1", START_THE_DIFF),
    "the diff build's end": ("build_finished 1", BUILD_END),
    # the run (GetItem: `ensure_run`; cut: a hosted run exists before its first state), the diff build's
    # record and its report (a GetItem each: the bounded diff), the review, `review_started`, the
    # companion's turn, `review_turn_recorded` and the verdict `review_verdict` (one transaction; was 8:
    # a PutItem each)
    "the companion's first turn and verdict": ("review_turn 1", 4),
    "the park": ("review_park 1", PARK),
    "an operator's reply": ("api POST resume 1", REPLY),
    "the diff built again (Rediff)": ("diff_start 2", START_THE_DIFF),
    "the second diff build's end": ("build_finished 2", BUILD_END),
    # the run's reviews (Query), the turns (Query), the diff build's record and report (GetItem each), the
    # turn, `review_turn_recorded` and `review_verdict` (one transaction; was 9: a PutItem each), the
    # review again (GetItem: did the operator act meanwhile?), the review pending again (conditional PutItem)
    "the companion's next turn and verdict": ("review_turn 2", 7),
    "the park again": ("review_park 2", PARK),
    "approve": ("api POST resume 2", APPROVE),
    # the run's reviews (Query), the build's record (PutItem), StartBuild, `review_merge_started` (PutItem)
    "the merge build started (Merge)": ("merge_start 1", 4),
    "the merge build's end (its outcome sent)": ("build_finished 3", BUILD_END),
    "the merge recorded (RecordMerge)": ("merge_record 1", MERGE_RECORD),
    "the run's end": ("run_lifecycle 1", RUN_END),
}
# their sum: the whole life by Baton's Lambdas (was 93: each action read the run, and the dialogue twice; each
# park's timer, stopped by the action that released it, no longer fires: -2, +2 StopExecution; was 89:
# each park's run paused and its two events joined its transaction, -3 twice; was 83: each turn and its
# events are one write, the first with its review: -4, -2 and the reply's -1; was 76: each action's
# decision and its event one write, after the head read with the wait: -2 twice; was 72: each build's end
# claims its record without reading it first, -1 three times; was 69: the merge's record writes the run's
# merge fields in its event's transaction, -1); the lower bound is 20;
# bench/parts/cost_model.py counts the same but the 3 StartBuild (a subprocess there)
REVIEW_TOTAL = 68
# The builds' own calls (Baton's `python -m baton.merge.build` in CodeBuild, not a Lambda): its report (PutItem)
BUILD_REPORT = 1


class ReviewCalls(CallsNamed):
    """`CallsNamed` with each handler invocation numbered ("build_finished 2": its second), the builds'
    StartBuild requests kept (moto's CodeBuild runs none: the test runs each) and the invocations ended."""

    def __init__(self) -> None:
        super().__init__()
        self.builds: list[dict[str, Any]] = []
        self.ended: Counter[str] = Counter()
        self._started: Counter[str] = Counter()

    def hook(self, model: Any, **kwargs: Any) -> None:
        super().hook(model, **kwargs)
        if model.name == "StartBuild":
            with self._lock:
                self.builds.append(json.loads(kwargs["params"]["body"]))

    def label(self, name: str) -> str:
        with self._lock:
            self._started[name] += 1
            return f"{name} {self._started[name]}"

    def attribute(self, stack: MotoStack) -> None:
        original = stack.dispatcher.invoke

        def numbered(function_name: str, event: Any) -> tuple[Any, bool]:
            before = getattr(self._local, "who", None)
            name = function_name
            if function_name == "api":
                name = f"api {event.get('httpMethod')} {event.get('path', '').rsplit('/', 1)[-1]}"
            self._local.who = self.label(name)
            try:
                return original(function_name, event)
            finally:
                self._local.who = before
                with self._lock:
                    self.ended[name] += 1

        stack.dispatcher.invoke = numbered  # type: ignore[method-assign]

    def ran(self, name: str, times: int) -> None:
        """Until `name`'s invocations have ended `times` times in all."""
        wait_for(lambda: self.ended[name] >= times, timeout=30)


@pytest.fixture
def review_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReviewCalls]:
    yield hooked(ReviewCalls(), monkeypatch)


@pytest.fixture
def review_stack(moto_stack: MotoStack, monkeypatch: pytest.MonkeyPatch) -> MotoStack:
    """The moto stack with the review gate as deployed: the CodeBuild merge runner on a project of moto's,
    the offline companion (the Bedrock one is a model call: one InvokeModel a turn, not counted here)."""
    monkeypatch.setenv("BATON_COMPANION", "offline")
    monkeypatch.setenv("BATON_MERGE_RUNNER", "codebuild")
    monkeypatch.setenv("BATON_MERGE_PROJECT", PROJECT)
    get_settings.cache_clear()
    services.cache_clear()
    import boto3

    boto3.client("codebuild").create_project(
        name=PROJECT,
        source={"type": "S3", "location": "baton-merge-source/source.zip"},
        artifacts={"type": "NO_ARTIFACTS"},
        environment={"type": "LINUX_CONTAINER", "image": "python:3.12", "computeType": "BUILD_GENERAL1_SMALL"},
        serviceRole="arn:aws:iam::123456789012:role/baton-merge",
    )
    moto_stack.services = services()
    return moto_stack


def _gate_input(tmp: Path, **overrides: Any) -> dict[str, Any]:
    """A gate on a throwaway repository, cloned by its build from a bare copy (its `repo_url`)."""
    repo = create_demo_repo(tmp / "repo")
    bare = tmp / "origin.git"
    run_git(tmp, "clone", "--quiet", "--bare", str(repo.path), str(bare))
    config = repo.gate_input(repo_url=bare.as_uri(), **overrides)
    del config["repo_path"]
    return config


def _api(stack: MotoStack, method: str, path: str, body: Any = None) -> dict[str, Any]:
    return api(stack, method, path, body, ok=(200, 201))


def _act(stack: MotoStack, run_id: str, action: str, **keys: str) -> dict[str, Any]:
    answers = {"__review_action": action} | {f"__review_{key}": value for key, value in keys.items()}
    return _api(stack, "POST", f"/api/runs/{run_id}/resume", {"answers": answers, "node": GATE})


def _build(stack: MotoStack, found: ReviewCalls, n: int) -> None:
    """The n-th build StartBuild asked for: run as CodeBuild would (its report written), then its end
    (CodeBuild's state-change event) handed to `build_finished`."""
    wait_for(lambda: len(found.builds) >= n, timeout=30)
    started = found.builds[n - 1]
    variables = started["environmentVariablesOverride"]
    environ = {v["name"]: v["value"] for v in variables} | {"BATON_TABLE_NAME": stack.provisioned.table_name}
    found._local.who = found.label("build")  # Baton's code in CodeBuild, not a Lambda
    try:
        assert run_build_main(environ) == 0
    finally:
        found._local.who = None
    detail = {
        "build-status": "SUCCEEDED",
        "project-name": PROJECT,
        "build-id": f"{PROJECT}:build-{n}",
        "additional-information": {"environment": {"environment-variables": variables}},
    }
    event = {"source": "aws.codebuild", "detail-type": "CodeBuild Build State Change", "detail": detail}
    assert invoke(stack, "build_finished", event)["sent"] is True


def _parked(stack: MotoStack, found: ReviewCalls, run_id: str, parks: int) -> None:
    """Until the review has parked `parks` times and asks its operator."""
    found.ran("review_park", parks)
    wait = stack.services.core.store.get_wait(run_id, GATE)
    assert wait is not None and wait.status == "parked", wait


def _start(stack: MotoStack, found: ReviewCalls, run_id: str, tmp: Path) -> None:
    """The test's review started (the run's start is no handler's), its diff built, its first turn taken
    and parked."""
    stack.services.runs.start("review_gate", _gate_input(tmp, timeout_seconds=600), run_id=run_id, caller="op")
    _build(stack, found, 1)
    _parked(stack, found, run_id, 1)


def _check(kind: str, budgets: dict[str, tuple[str, int]], total: int, found: ReviewCalls, builds: range) -> None:
    """Each operation's calls exactly its budget, their sum the life's total, each of the `builds` (by
    number) one call, its report, and no call by a handler no budget names."""
    calls = dict(found.calls)
    listed = "\n  ".join(f"{who}:\n    " + "\n    ".join(made) for who, made in calls.items())
    for operation, (who, budget) in budgets.items():
        made = calls.get(who, [])
        assert len(made) == budget, f"{kind}, {operation}: {len(made)} AWS calls, budget {budget}:\n  {listed}"
    whole = sum(len(calls.get(who, [])) for who, _ in budgets.values())
    assert whole == total, f"{kind}'s whole life: {whole} AWS calls, budget {total}:\n  {listed}"
    report = "dynamodb.PutItem (build_records.py:put_report)"
    reports = {f"build {n}": [report] * BUILD_REPORT for n in builds}
    assert {who: made for who, made in calls.items() if who.startswith("build ")} == reports, listed
    named = {who for who, _ in budgets.values()} | set(reports)
    assert set(calls) <= named, f"{kind}: calls by a handler no budget names:\n  {listed}"


def test_a_review_life_stays_in_budget_operation_by_operation(
    review_calls: ReviewCalls, review_stack: MotoStack, tmp_path: Path
) -> None:
    review_calls.attribute(review_stack)
    run_id = "life-review"
    _start(review_stack, review_calls, run_id, tmp_path)
    replied = _act(review_stack, run_id, "reply", reply="Why the new parameter?")
    assert replied["resumed"] is True, replied
    _build(review_stack, review_calls, 2)
    _parked(review_stack, review_calls, run_id, 2)
    approved = _act(review_stack, run_id, "approve_merge")
    assert approved["resumed"] is True, approved
    _build(review_stack, review_calls, 3)
    review_calls.ran("merge_record", 1)
    run_end(review_stack, run_id, "SUCCEEDED")
    assert review_stack.services.core.require_run(run_id).merge_status == "merged"
    assert timer_statuses(review_stack, run_id) == ["ABORTED", "ABORTED"]  # each park's, stopped by its release
    _check("review", REVIEW, REVIEW_TOTAL, review_calls, builds=range(1, 4))
    # the decisions written in one transaction with their actions still form the run's one chain
    verdict = AuditService(review_stack.services.core.store).verify(run_id)
    assert verdict.valid and not verdict.unchained, verdict.first_mismatch
    assert verdict.head_seq == verdict.records == 3, verdict  # the reply, the approval, the merge recorded


FORCE: dict[str, tuple[str, int]] = {
    "force_merge": ("api POST resume 1", APPROVE),
    "the merge build started": ("merge_start 1", 4),
    "the merge build's end": ("build_finished 2", BUILD_END),
    "the merge recorded": ("merge_record 1", MERGE_RECORD),
    "the run's end": ("run_lifecycle 1", RUN_END),
}
FORCE_TOTAL = 23  # (was 24: the merge's record, -1)


def test_a_force_merge_stays_in_budget(review_calls: ReviewCalls, review_stack: MotoStack, tmp_path: Path) -> None:
    review_calls.attribute(review_stack)
    run_id = "life-force"
    _start(review_stack, review_calls, run_id, tmp_path)
    review_calls.calls.clear()  # the start, the diff and the park: as in the life above
    forced = _act(review_stack, run_id, "force_merge", reason="the TODO is tracked")
    assert forced["resumed"] is True, forced
    _build(review_stack, review_calls, 2)
    review_calls.ran("merge_record", 1)
    run_end(review_stack, run_id, "SUCCEEDED")
    _check("force", FORCE, FORCE_TOTAL, review_calls, builds=range(2, 3))


REJECT_LIFE: dict[str, tuple[str, int]] = {
    "request_changes": ("api POST resume 1", REJECT),
    "the run's end": ("run_lifecycle 1", RUN_END),
}


def test_request_changes_stays_in_budget(review_calls: ReviewCalls, review_stack: MotoStack, tmp_path: Path) -> None:
    review_calls.attribute(review_stack)
    run_id = "life-reject"
    _start(review_stack, review_calls, run_id, tmp_path)
    review_calls.calls.clear()
    rejected = _act(review_stack, run_id, "request_changes", message="Handle an empty title.")
    assert rejected["resumed"] is True, rejected
    run_end(review_stack, run_id, "SUCCEEDED")
    _check("request_changes", REJECT_LIFE, REJECT + RUN_END, review_calls, builds=range(0))


STOP_LIFE: dict[str, tuple[str, int]] = {
    # POST /api/runs/{id}/stop (baton/services/run_stop.py): the run (GetItem), its execution (DescribeExecution:
    # `refresh`, ended already?), the stop's reason on the run (UpdateItem), the run's pending interactions
    # and its waits (a Query each), the review cancelled and its wait released (one transaction), the
    # park's timer stopped (StopExecution: firing, it would cost a gate_deadline invocation and the wait's
    # GetItem), StopExecution, the run (GetItem) and its execution (DescribeExecution) again, whose end is recorded
    # at once on the run as read: its end with `run_aborted` (one transaction), the notification (SNS); then
    # the run again (GetItem) and its interactions (Query): the view the route returns (was 15: the route
    # read the run once more for it). Cut: the run is read three times where one read and the writes'
    # conditions would do (-2), and the execution twice (-1)
    "stop (the review cancelled)": ("api POST stop 1", 14),
    # the run (GetItem), its end (a transaction, refused: the stop recorded it), the run again (GetItem: ended
    # as the event says?)
    "the run's end (EventBridge)": ("run_lifecycle 1", 3),
}
# (was 18: the route read the run once more; the park's timer no longer fires after the stop: -1 by
# gate_deadline, +1 StopExecution)
STOP_TOTAL = 17


def test_a_stop_cancelling_the_review_stays_in_budget(
    review_calls: ReviewCalls, review_stack: MotoStack, tmp_path: Path
) -> None:
    review_calls.attribute(review_stack)
    run_id = "life-stop"
    _start(review_stack, review_calls, run_id, tmp_path)
    review_calls.calls.clear()
    with sfn_stop_execution():  # moto's own stop wakes no task-token wait
        stopped = _api(review_stack, "POST", f"/api/runs/{run_id}/stop", {"reason": "wrong branch"})
        assert stopped["status"] == "aborted", stopped
        run_end(review_stack, run_id, "ABORTED", recorded=False)  # the stop recorded it
    assert timer_statuses(review_stack, run_id) == ["ABORTED"]  # stopped by the stop: it never fires
    [review] = review_stack.services.core.store.list_run_interactions(run_id, kind="review")
    assert review.state.status == "cancelled", review
    _check("stop", STOP_LIFE, STOP_TOTAL, review_calls, builds=range(0))
