"""Issue 32, item 1: GET /api/runs/{run_id}/review/diff is the diff the companion read (its diff source,
its bound), file by file, with the commit it is the diff of; a push after the review is said, not hidden."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.api import deps
from baton.api.app import create_app
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.contracts import AskRequest, ReviewDiff
from baton.contracts.inbox import InboxQuery
from baton.domain.unified_diff import file_diffs
from baton.errors import NotFoundError, ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.merge.build import run_build
from baton.merge.diff import truncation_marker
from baton.merge.gitcmd import git_out, run_git
from baton.models import ReviewRequest
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.inbox import InboxService
from baton.services.questions import QuestionService
from baton.services.review import ReviewService
from baton.services.runs import RunService
from tests.fakes import MemoryBuildRecords, RecordingBuildRunner

TOKEN = "local-secret"
GATE = "ship_review"


@pytest.fixture
def review(core: Core) -> ReviewService:
    runner = RecordingBuildRunner()
    return ReviewService(
        core, companion=OfflineCompanion, runner=lambda: runner, records=MemoryBuildRecords(), diffs=GitDiffSource()
    )


@pytest.fixture
def repo(tmp_path: Path) -> DemoRepo:
    return create_demo_repo(tmp_path / "repo")


def _open(review: ReviewService, repo: DemoRepo, **config: Any) -> None:
    assert review.first_turn("r1", repo.gate_input(**config)).ok is True
    review.park("r1", GATE, "tok-1")


def _push(repo: DemoRepo, files: dict[str, str], subject: str) -> str:
    run_git(repo.path, "checkout", "--quiet", repo.run_branch)
    for name, text in files.items():
        (repo.path / name).write_text(text)
    run_git(repo.path, "add", "--", *files)
    run_git(repo.path, "commit", "--quiet", "-m", subject)
    run_git(repo.path, "checkout", "--quiet", "main")
    return git_out(repo.path, "rev-parse", repo.run_branch)


def test_the_diff_is_the_one_the_companion_read_file_by_file(review: ReviewService, repo: DemoRepo) -> None:
    _open(review, repo)
    view = review.view("r1")
    diff = review.diff_view("r1")
    assert isinstance(diff, ReviewDiff)
    assert diff.head == view.reviewed_head == repo.run_head and diff.digest == view.diff_digest
    assert diff.reviewed_head == view.reviewed_head and diff.diff_digest == view.diff_digest
    assert not diff.branch_moved and not diff.truncated
    assert (diff.run_branch, diff.target, diff.max_bytes) == (repo.run_branch, repo.base_branch, 60_000)
    assert view.diff is not None and [f.path for f in diff.files] == view.diff["files"]
    assert diff.files_changed == len(diff.files) > 0
    assert sum(f.insertions for f in diff.files) == diff.insertions
    assert sum(f.deletions for f in diff.files) == diff.deletions
    for f in diff.files:
        assert f.text.startswith(f"diff --git a/{f.old_path or f.path} b/{f.path}\n")
        assert f.status in ("added", "modified", "deleted", "renamed") and not f.truncated


def test_an_over_bound_diff_marks_the_cut_file_and_the_files_after_it(review: ReviewService, repo: DemoRepo) -> None:
    _push(repo, {f"big_{n}.txt": "".join(f"line {k} of {n}\n" for k in range(40)) for n in range(3)}, "big files")
    _open(review, repo, diff_max_bytes=700)
    diff = review.diff_view("r1")
    assert diff.truncated and diff.max_bytes == 700 and diff.shown_bytes < diff.total_bytes
    assert diff.head == review.view("r1").reviewed_head
    shown = [f for f in diff.files if f.text]
    cut = [f for f in diff.files if f.truncated]
    assert shown and cut and shown[-1].truncated, "the last shown file is the one the bound cut"
    assert [f for f in cut if not f.text] == diff.files[len(shown) :]
    assert len(diff.files) - len(shown) == diff.files_not_shown
    assert all(f.status is None for f in diff.files if not f.text)
    assert not any("diff truncated" in f.text for f in diff.files), "the marker line is not a file's line"
    assert sum(len(f.text.encode()) for f in diff.files) == diff.shown_bytes


def test_a_push_after_the_review_is_said_and_the_diff_is_of_the_new_head(review: ReviewService, repo: DemoRepo) -> None:
    _open(review, repo)
    moved = _push(repo, {"late.sh": "echo late\n"}, "late, unreviewed")
    diff = review.diff_view("r1")
    assert diff.branch_moved and diff.head == moved and diff.reviewed_head == repo.run_head
    assert diff.digest != diff.diff_digest
    assert any(f.path == "late.sh" and f.status == "added" for f in diff.files)


def test_a_run_without_a_review_has_no_diff(review: ReviewService, core: Core) -> None:
    core.ensure_run("r2")
    with pytest.raises(NotFoundError):
        review.diff_view("r2")


def test_a_review_stored_without_a_run_branch_is_refused_in_words(review: ReviewService, repo: DemoRepo) -> None:
    """A record from before run_branch was required reads back as a clear refusal, not a crash."""
    _open(review, repo)
    stored = review.core.store.list_run_interactions("r1", kind="review")[-1]
    config = {k: v for k, v in stored.request_as(ReviewRequest).config.items() if k != "run_branch"}
    legacy = stored.model_copy(update={"run_id": "r2", "request": stored.request.model_copy(update={"config": config})})
    review.core.ensure_run("r2")
    review.core.store.put_interaction(legacy)
    for read in (review.view, review.diff_view):
        with pytest.raises(ValidationFailedError, match="invalid review gate configuration: run_branch: Field"):
            read("r2")


RENAME_DELETE = """diff --git a/old.py b/new.py
similarity index 90%
rename from old.py
rename to new.py
index 1..2 100644
--- a/old.py
+++ b/new.py
@@ -1 +1 @@
-a
+b
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 3..0
--- a/gone.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
"""


def test_file_diffs_tell_renames_and_deletions_apart() -> None:
    renamed, gone = file_diffs(RENAME_DELETE, ["new.py", "gone.txt"], truncated=False)
    assert (renamed.path, renamed.renamed_from, renamed.status, renamed.added, renamed.removed) == (
        "new.py",
        "old.py",
        "renamed",
        1,
        1,
    )
    assert (gone.status, gone.removed, gone.truncated) == ("deleted", 2, False)
    assert renamed.text + gone.text == RENAME_DELETE


def test_a_diff_cut_before_any_file_lists_every_file_as_not_shown() -> None:
    text = truncation_marker(0, 900, 2) + "\n"
    assert [(f.path, f.status, f.truncated) for f in file_diffs(text, ["a", "b"], truncated=True)] == [
        ("a", None, True),
        ("b", None, True),
    ]


@pytest.fixture
def api(core: Core, review: ReviewService) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core), review=review)
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(path: str, token: str = TOKEN) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        result = app.resolve(to_proxy_event("GET", path, headers, b"", "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def test_the_diff_route_sends_the_contract_under_the_review_s_auth(
    api: Any, review: ReviewService, repo: DemoRepo
) -> None:
    _open(review, repo)
    status, body = api(f"/api/runs/r1/review/diff?gate={GATE}")
    assert status == 200
    assert body == review.diff_view("r1", GATE).model_dump(mode="json", by_alias=True)
    assert api("/api/runs/r1/review/diff", token="wrong")[0] == api("/api/runs/r1/review", token="wrong")[0] == 401
    assert api("/api/runs/nope/review/diff")[0] == 404
    assert api("/api/runs/r1/review/diff?gate=other")[0] == 404


def test_the_inbox_titles_each_review_by_its_run_branch_and_change(
    review: ReviewService, core: Core, tmp_path: Path
) -> None:
    first = create_demo_repo(tmp_path / "one")
    second = create_demo_repo(tmp_path / "two", run_branch="baton/run-other", commits=1)
    assert review.first_turn("r1", first.gate_input()).ok and review.first_turn("r2", second.gate_input()).ok
    review.park("r1", GATE, "tok-1")
    review.park("r2", GATE, "tok-2")
    core.ensure_run("r3")
    QuestionService(core).ask("r3", AskRequest(node="draft", question="Which target?"), caller="agent")
    page = InboxService(core).page(InboxQuery(), caller="op")
    titles = {item.run_id: item.title for item in page.items}
    files = [len(review.diff_view(run).files) for run in ("r1", "r2")]
    # The change is named by its first commit's subject (the oldest on the run branch), stored with the diff.
    subject = "Add a polite greeting with a title"
    assert (
        titles["r1"] == f"Review: r1 · baton/run-demo → the checked-out branch · {files[0]} files changed · {subject}"
    )
    assert files[1] == 1  # one commit, one file: the singular
    assert titles["r2"] == f"Review: r2 · baton/run-other → the checked-out branch · 1 file changed · {subject}"
    assert titles["r1"] != titles["r2"]
    assert titles["r3"] == "Which target?", "any other item's title is its prompt"


def test_on_the_stacks_the_diff_is_the_diff_build_s_report_the_companion_read(core: Core, repo: DemoRepo) -> None:
    runner, records = RecordingBuildRunner(), MemoryBuildRecords()
    stacks = ReviewService(core, companion=OfflineCompanion, runner=lambda: runner, records=records)  # no `diffs`
    config = repo.gate_input(diff_max_bytes=700)
    stacks.start_diff("r1", config, "tok-diff")
    [request] = runner.started
    records.put_report(run_build(request, {}))
    assert stacks.first_turn("r1", config).ok
    stacks.park("r1", GATE, "tok-1")
    report = records.get_report("r1", GATE, "diff")
    assert report is not None and report.diff is not None and report.diff.truncated
    _push(repo, {"late.sh": "echo late\n"}, "late")  # the stored diff does not move: the companion reads it
    diff = stacks.diff_view("r1")
    assert (diff.head, diff.digest, diff.total_bytes) == (report.diff.head, report.diff.digest, report.diff.total_bytes)
    assert not diff.branch_moved and diff.max_bytes == 700
    assert (
        "".join(f.text for f in diff.files)
        + truncation_marker(diff.shown_bytes, diff.total_bytes, diff.files_not_shown)
        + "\n"
        == report.diff.text
    )
