"""The merge step of the review gate, on real throwaway git repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.domain.merge_contracts import MAX_CAUSE_CHARS, BuildReport, BuildRequest
from baton.errors import BatonError, NotFoundError, ValidationFailedError
from baton.merge.build import main as build_main
from baton.merge.cli import main
from baton.merge.diff import run_branch_diff
from baton.merge.squash import TRAILER_BRANCH, TRAILER_HEAD, MergeOutcome, merge_run_branch
from tests.gitrepo import git, init_repo

REPO_ROOT = Path(__file__).resolve().parents[2]


def write(repo: Path, name: str, content: str) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)


def commit(repo: Path, message: str, **files: str) -> str:
    for name, content in files.items():
        write(repo, name, content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: one commit (README, app.py); run branch `baton/run-1`: two commits; main checked out."""
    root = init_repo(tmp_path / "repo")
    commit(root, "initial", **{"README.md": "hello\n", "app.py": "x = 1\n"})
    git(root, "checkout", "-q", "-b", "baton/run-1")
    git(root, "config", "user.name", "Agent")
    commit(root, "add feature", **{"feature.py": "def f():\n    return 1\n"})
    commit(root, "tweak app", **{"app.py": "x = 2\n"})
    git(root, "config", "user.name", "Operator")
    git(root, "checkout", "-q", "main")
    return root


def snapshot(repo: Path) -> dict[str, Any]:
    """Everything a rejected merge must leave alone: refs, HEAD, index, working tree contents."""
    files = {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "symbolic": git(repo, "symbolic-ref", "-q", "HEAD"),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "index": git(repo, "ls-files", "-s"),
        "files": files,
    }


# ------------------------------------------------------------------------------------------ squash


def test_squash_makes_one_commit_with_the_run_tree_and_a_listing_message(repo: Path) -> None:
    main_before = git(repo, "rev-parse", "main")
    run_head = git(repo, "rev-parse", "baton/run-1")

    out = merge_run_branch(repo, "baton/run-1")

    assert out.merge_status == "merged"
    assert out.strategy == "squash"
    assert (out.final_branch, out.merged_into, out.target) == ("main", "main", "main")
    assert out.final_commit == git(repo, "rev-parse", "HEAD")
    assert git(repo, "rev-parse", f"{out.final_commit}^") == main_before  # one commit, one parent
    assert git(repo, "rev-list", "--count", f"{main_before}..main") == "1"
    assert git(repo, "rev-parse", "HEAD^{tree}") == git(repo, "rev-parse", "baton/run-1^{tree}")
    msg = git(repo, "log", "-1", "--format=%B")
    assert "baton/run-1" in msg.splitlines()[0]
    assert "* add feature" in msg and "* tweak app" in msg
    assert f"{TRAILER_BRANCH}: baton/run-1" in msg
    assert f"{TRAILER_HEAD}: {run_head}" in msg
    assert git(repo, "log", "-1", "--format=%an") == "Agent"  # authored by the run's author
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "feature.py").exists()
    assert git(repo, "rev-parse", "baton/run-1") == run_head  # run branch untouched


def test_squash_message_override(repo: Path) -> None:
    out = merge_run_branch(repo, "baton/run-1", message="Ship the feature")
    assert out.merge_status == "merged"
    msg = git(repo, "log", "-1", "--format=%B")
    assert msg.splitlines()[0] == "Ship the feature"
    assert "* add feature" not in msg
    assert f"{TRAILER_BRANCH}: baton/run-1" in msg


def test_squash_merges_when_target_moved_on_without_conflict(repo: Path) -> None:
    commit(repo, "docs", **{"docs.md": "more\n"})
    out = merge_run_branch(repo, "baton/run-1")
    assert out.merge_status == "merged"
    assert (repo / "docs.md").exists() and (repo / "feature.py").exists()
    assert (repo / "app.py").read_text() == "x = 2\n"


# ------------------------------------------------------------------------------------------- merge


def test_merge_strategy_fast_forwards(repo: Path) -> None:
    run_head = git(repo, "rev-parse", "baton/run-1")
    out = merge_run_branch(repo, "baton/run-1", strategy="merge")
    assert out.merge_status == "merged"
    assert out.final_commit == run_head
    assert git(repo, "rev-parse", "main") == run_head
    assert git(repo, "status", "--porcelain") == ""


def test_merge_strategy_rejects_non_fast_forward_untouched(repo: Path) -> None:
    commit(repo, "docs", **{"docs.md": "more\n"})
    before = snapshot(repo)
    out = merge_run_branch(repo, "baton/run-1", strategy="merge")
    assert out.merge_status == "rejected"
    assert out.reject_code == "non_fast_forward"
    assert "fast-forward" in out.reason and "squash" in out.reason
    assert out.final_commit is None and out.merged_into is None
    assert snapshot(repo) == before


# ----------------------------------------------------------------------------------------- guards


def test_dirty_tree_rejected_then_cleaned_then_merged(repo: Path) -> None:
    write(repo, "README.md", "local edit\n")
    before = snapshot(repo)
    out = merge_run_branch(repo, "baton/run-1")
    assert out.merge_status == "rejected"
    assert out.reject_code == "dirty_tree"
    assert out.dirty_files == ["README.md"]
    assert "README.md" in out.reason
    assert snapshot(repo) == before

    git(repo, "checkout", "--", "README.md")
    assert merge_run_branch(repo, "baton/run-1").merge_status == "merged"


def test_staged_change_counts_as_dirty(repo: Path) -> None:
    write(repo, "new.txt", "staged\n")
    git(repo, "add", "new.txt")
    out = merge_run_branch(repo, "baton/run-1")
    assert out.reject_code == "dirty_tree"
    assert out.dirty_files == ["new.txt"]


def test_unrelated_untracked_file_is_allowed_but_a_colliding_one_is_not(repo: Path) -> None:
    write(repo, "notes.txt", "mine\n")  # untracked, not touched by the merge
    write(repo, "feature.py", "my own draft\n")  # untracked, the merge would create it
    before = snapshot(repo)
    out = merge_run_branch(repo, "baton/run-1")
    assert out.merge_status == "rejected"
    assert out.reject_code == "untracked_would_be_overwritten"
    assert out.dirty_files == ["feature.py"]
    assert snapshot(repo) == before

    (repo / "feature.py").unlink()
    out = merge_run_branch(repo, "baton/run-1")
    assert out.merge_status == "merged"
    assert (repo / "notes.txt").read_text() == "mine\n"


def test_conflict_rejected_with_files_and_repository_unchanged(repo: Path) -> None:
    commit(repo, "main edits app", **{"app.py": "x = 3\n"})
    before = snapshot(repo)

    out = merge_run_branch(repo, "baton/run-1")

    assert out.merge_status == "rejected"
    assert out.reject_code == "conflict"
    assert out.conflicting_files == ["app.py"]
    assert "app.py" in out.reason
    assert snapshot(repo) == before
    assert (repo / "app.py").read_text() == "x = 3\n"
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "MERGE_HEAD").exists()


def test_target_not_checked_out_is_rejected(repo: Path) -> None:
    git(repo, "branch", "release")
    before = snapshot(repo)
    out = merge_run_branch(repo, "baton/run-1", into="release")
    assert out.merge_status == "rejected"
    assert out.reject_code == "target_not_checked_out"
    assert "'release'" in out.reason and "'main'" in out.reason
    assert snapshot(repo) == before


def test_named_target_that_is_checked_out_is_merged(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "release")
    out = merge_run_branch(repo, "baton/run-1", into="release")
    assert out.merge_status == "merged"
    assert (out.final_branch, out.merged_into) == ("release", "release")
    assert git(repo, "rev-parse", "release") == out.final_commit
    assert git(repo, "rev-parse", "main") != out.final_commit


def test_detached_head_is_rejected_for_current(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    out = merge_run_branch(repo, "baton/run-1")
    assert out.reject_code == "detached_head"
    assert out.target is None


def test_run_branch_checked_out_is_rejected_for_current(repo: Path) -> None:
    git(repo, "checkout", "-q", "baton/run-1")
    before = snapshot(repo)
    out = merge_run_branch(repo, "baton/run-1")
    assert out.reject_code == "target_not_checked_out"
    assert snapshot(repo) == before


def test_merge_in_progress_is_rejected(repo: Path) -> None:
    commit(repo, "main edits app", **{"app.py": "x = 3\n"})
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "baton/run-1"], capture_output=True, check=False)
    out = merge_run_branch(repo, "baton/run-1")
    assert out.merge_status == "rejected"
    assert out.reject_code == "operation_in_progress"


# ------------------------------------------------------------------------------------ idempotence


def test_repeat_after_squash_is_noop_with_the_earlier_commit(repo: Path) -> None:
    first = merge_run_branch(repo, "baton/run-1")
    commit(repo, "later work on main", **{"later.txt": "x\n"})
    head = git(repo, "rev-parse", "HEAD")

    again = merge_run_branch(repo, "baton/run-1")

    assert again.merge_status == "noop"
    assert again.final_commit == first.final_commit
    assert (again.final_branch, again.merged_into) == ("main", "main")
    assert git(repo, "rev-parse", "HEAD") == head


def test_repeat_is_noop_even_if_tree_is_dirty_since(repo: Path) -> None:
    first = merge_run_branch(repo, "baton/run-1")
    write(repo, "README.md", "edited after merge\n")
    again = merge_run_branch(repo, "baton/run-1")
    assert again.merge_status == "noop"
    assert again.final_commit == first.final_commit


def test_repeat_after_fast_forward_is_noop(repo: Path) -> None:
    first = merge_run_branch(repo, "baton/run-1", strategy="merge")
    again = merge_run_branch(repo, "baton/run-1", strategy="merge")
    assert again.merge_status == "noop"
    assert again.final_commit == first.final_commit


def test_changes_already_present_without_trailer_is_noop(repo: Path) -> None:
    git(repo, "checkout", "-q", "baton/run-1", "--", ".")
    commit(repo, "applied by hand")
    out = merge_run_branch(repo, "baton/run-1")
    assert out.merge_status == "noop"
    assert out.final_commit is None


def test_run_branch_gains_commits_after_squash_and_merges_again(repo: Path) -> None:
    merge_run_branch(repo, "baton/run-1")
    git(repo, "checkout", "-q", "baton/run-1")
    commit(repo, "follow-up", **{"feature.py": "def f():\n    return 2\n"})
    git(repo, "checkout", "-q", "main")
    out = merge_run_branch(repo, "baton/run-1")
    assert out.merge_status == "merged"
    assert (repo / "feature.py").read_text().endswith("return 2\n")
    msg = git(repo, "log", "-1", "--format=%B")
    assert "* follow-up" in msg and "* add feature" not in msg  # only what is new since the last squash
    assert merge_run_branch(repo, "baton/run-1").merge_status == "noop"


# ------------------------------------------------------------------------------------ into=none


def test_into_none_touches_nothing_and_says_it_merged_nothing(repo: Path) -> None:
    write(repo, "README.md", "dirty is fine: nothing is touched\n")
    before = snapshot(repo)
    out = merge_run_branch(repo, "baton/run-1", into="none")
    # Issue 28 item 11: reported as "merged" by "squash" although nothing was merged or squashed.
    assert (out.merge_status, out.strategy) == ("not_merged", None)
    assert "not merged (merge_into: none)" in out.reason
    assert out.final_branch == "baton/run-1"
    assert out.merged_into is None
    assert out.final_commit == git(repo, "rev-parse", "baton/run-1")
    assert snapshot(repo) == before


# ------------------------------------------------------------------------------------- bad input


def test_bad_inputs_raise_baton_errors(repo: Path, tmp_path: Path) -> None:
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    with pytest.raises(NotFoundError, match="not a git repository"):
        merge_run_branch(plain_dir, "baton/run-1")
    with pytest.raises(NotFoundError, match="not a directory"):
        merge_run_branch(tmp_path / "missing", "baton/run-1")
    with pytest.raises(NotFoundError, match="run branch"):
        merge_run_branch(repo, "baton/run-404")
    with pytest.raises(NotFoundError, match="target branch"):
        merge_run_branch(repo, "baton/run-1", into="nope")
    with pytest.raises(ValidationFailedError, match="strategy"):
        merge_run_branch(repo, "baton/run-1", strategy="rebase")
    with pytest.raises(ValidationFailedError, match="same branch"):
        merge_run_branch(repo, "baton/run-1", into="baton/run-1")
    with pytest.raises(ValidationFailedError):
        merge_run_branch(repo, "--upload-pack=evil")
    assert issubclass(NotFoundError, BatonError)


# ------------------------------------------------------------------------------------------- CLI


def _cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT / "layers/baton/python"), env.get("PYTHONPATH")]))
    return env


def test_cli_json_subprocess(repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "baton.merge", "baton/run-1", "--repo", str(repo), "--json"],
        capture_output=True,
        text=True,
        env=_cli_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["merge_status"] == "merged"
    assert body["final_commit"] == git(repo, "rev-parse", "HEAD")
    assert set(body) >= {
        "merge_status",
        "final_commit",
        "final_branch",
        "merged_into",
        "strategy",
        "reason",
        "conflicting_files",
    }


def test_cli_bad_input_exits_2_without_traceback(repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "baton.merge", "baton/run-1", "--repo", str(repo), "--strategy", "octopus"],
        capture_output=True,
        text=True,
        env=_cli_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "unknown merge strategy 'octopus'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_help_teaches() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "baton.merge", "--help"],
        capture_output=True,
        text=True,
        env=_cli_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    for word in ("--into", "--strategy", "--json", "baton.merge.build", "exit status", "examples"):
        assert word in proc.stdout


def test_cli_readable_line_and_rejected_exit_code(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, "main edits app", **{"app.py": "x = 3\n"})
    assert main(["baton/run-1", "--repo", str(repo)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("rejected: ")
    assert "conflict: app.py" in out


# ---------------------------------------------- the gate's build: one report into the table, no token


class RecordingWriter:
    """The build's only port (`BuildReportWriter`); `fail` simulates a table that refuses the write."""

    def __init__(self, fail: bool = False) -> None:
        self.reports: list[BuildReport] = []
        self.fail = fail

    def put_report(self, report: BuildReport) -> None:
        if self.fail:
            raise RuntimeError("AccessDenied")
        self.reports.append(report)


def _build_env(repo: Path, kind: str = "merge", **extra: str) -> dict[str, str]:
    request = BuildRequest(
        run_id="r1", gate="ship", kind=kind, build_key="k1", run_branch="baton/run-1", repo_path=str(repo)
    )  # type: ignore[arg-type]
    return {**request.environment(), **extra}


def test_build_reports_merged_outcome(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    writer = RecordingWriter()
    assert build_main(_build_env(repo), writer=writer) == 0
    [report] = writer.reports
    assert (report.run_id, report.gate, report.kind, report.build_key) == ("r1", "ship", "merge", "k1")
    assert report.outcome is not None and report.outcome.merge_status == "merged" and report.error is None
    assert report.outcome.final_commit == git(repo, "rev-parse", "HEAD")
    assert json.loads(capsys.readouterr().out)["final_commit"] == report.outcome.final_commit


def test_build_reports_rejection_as_an_outcome(repo: Path) -> None:
    write(repo, "README.md", "dirty\n")
    writer = RecordingWriter()
    assert build_main(_build_env(repo), writer=writer) == 1
    [report] = writer.reports
    assert report.outcome is not None and report.outcome.merge_status == "rejected"
    assert report.outcome.reject_code == "dirty_tree"


def test_build_reports_crash_as_merge_crashed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> MergeOutcome:
        raise OSError("disk on fire")

    monkeypatch.setattr("baton.merge.build.merge_run_branch", boom)
    writer = RecordingWriter()
    assert build_main(_build_env(repo), writer=writer) == 3
    [report] = writer.reports
    assert report.error == "MergeCrashed" and report.outcome is None
    assert report.cause is not None and "disk on fire" in report.cause


def test_build_reports_bad_input_as_merge_invalid_input(repo: Path) -> None:
    writer = RecordingWriter()
    assert build_main({**_build_env(repo), "BATON_RUN_BRANCH": "baton/run-404"}, writer=writer) == 2
    [report] = writer.reports
    assert report.error == "MergeInvalidInput" and report.cause is not None and "baton/run-404" in report.cause


def test_build_whose_report_cannot_be_written_exits_4(repo: Path) -> None:
    assert build_main(_build_env(repo), writer=RecordingWriter(fail=True)) == 4


def test_build_without_a_build_request_writes_nothing(repo: Path) -> None:
    writer = RecordingWriter()
    assert build_main({"BATON_RUN_BRANCH": "baton/run-1"}, writer=writer) == 2  # no run, gate or kind
    assert writer.reports == []


def test_diff_build_reports_the_bounded_diff_of_baton_merge_diff(repo: Path) -> None:
    writer = RecordingWriter()
    assert build_main(_build_env(repo, "diff", BATON_DIFF_MAX_BYTES="256"), writer=writer) == 0
    [report] = writer.reports
    assert report.kind == "diff" and report.diff == run_branch_diff(repo, "baton/run-1", "HEAD", max_bytes=256)
    assert report.diff is not None and report.diff.truncated
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"  # a diff touches nothing


def test_every_reported_cause_is_capped_once_by_the_report() -> None:
    long = BuildReport(run_id="r", gate="g", kind="merge", build_key="k", error="MergeCrashed", cause="x" * 40_000)
    short = BuildReport(run_id="r", gate="g", kind="merge", build_key="k", error="MergeInvalidInput", cause="-no")
    assert long.cause is not None and len(long.cause) == MAX_CAUSE_CHARS
    assert short.cause == "-no"


def test_build_holds_no_task_token(repo: Path) -> None:
    """Nothing the build is given or writes names a task token: Baton's function sends it."""
    writer = RecordingWriter()
    env = _build_env(repo)
    assert build_main(env, writer=writer) == 0
    assert not any("TOKEN" in name for name in env)
    assert "token" not in writer.reports[0].model_dump_json().lower()
