"""The bounded diff shown to the reviewer and the companion."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from baton.errors import NotFoundError, ValidationFailedError
from baton.merge.diff import bounded_diff, run_branch_diff
from tests.gitrepo import git, init_repo


def commit(repo: Path, message: str, files: dict[str, str | bytes]) -> str:
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo")
    commit(root, "initial", {"a.txt": "one\ntwo\nthree\n", "old.txt": "bye\n", "keep.txt": "k\n" * 20})
    return root


def test_small_diff_is_whole_with_stats(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "old.txt")
    head = commit(repo, "change", {"a.txt": "one\nTWO\nthree\nfour\n", "new.txt": "fresh\n", "bin.dat": b"\0\1\2"})

    d = bounded_diff(repo, base, head)

    assert not d.truncated
    assert (
        d.text
        == subprocess.run(
            ["git", "-C", str(repo), "diff", "--no-color", base, head],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert d.total_bytes == d.shown_bytes == len(d.text.encode())
    assert sorted(d.files) == ["a.txt", "bin.dat", "new.txt", "old.txt"]
    assert d.files_changed == 4
    assert d.insertions == 3  # TWO, four, fresh (binary counts 0)
    assert d.deletions == 2  # two, bye
    assert (d.base, d.head) == (base, head)
    assert "diff truncated" not in d.text


def test_rename_reports_new_path(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "mv", "keep.txt", "kept.txt")
    head = commit(repo, "rename", {})
    d = bounded_diff(repo, base, head)
    assert d.files == ["kept.txt"]
    assert d.files_changed == 1


def test_truncation_cuts_at_a_line_with_marker_and_whole_stats(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    files: dict[str, str | bytes] = {f"f{i:02d}.txt": "".join(f"line {i} {n}\n" for n in range(200)) for i in range(10)}
    head = commit(repo, "big", files)

    d = bounded_diff(repo, base, head, max_bytes=4_000)

    assert d.truncated
    assert len(d.text.encode()) <= 4_000
    assert d.total_bytes > 4_000
    assert d.files_changed == 10 and d.insertions == 2_000 and d.deletions == 0
    assert len(d.files) == 10
    body, marker = d.text[:-1].rsplit("\n", 1)
    assert marker == (
        f"[... diff truncated: showed {d.shown_bytes} of {d.total_bytes} bytes; "
        f"{d.files_not_shown} more files not shown ...]"
    )
    assert d.shown_bytes == len(body.encode()) + 1  # the body ends with a whole line
    full = git(repo, "diff", "--no-color", base, head) + "\n"
    assert full.startswith(body + "\n")
    shown_files = body.count("diff --git ")
    assert d.files_not_shown == 10 - shown_files
    assert 0 < d.files_not_shown < 10


def test_run_branch_diff_uses_merge_base(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "baton/run-1")
    commit(repo, "run work", {"feature.py": "print('hi')\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "main moved on", {"a.txt": "changed on main\n"})

    d = run_branch_diff(repo, "baton/run-1", "main")

    assert d.files == ["feature.py"]  # main's own change is not part of the run's diff
    assert d.insertions == 1 and d.deletions == 0
    assert d.base == git(repo, "merge-base", "main", "baton/run-1")
    assert d.first_commit_subject == "run work"


def test_the_first_commit_subject_is_the_oldest_of_the_range(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    commit(repo, "Add the retry helper\n\nA body the title leaves out.", {"retry.py": "x = 1\n"})
    head = commit(repo, "Tune the retry helper", {"retry.py": "x = 2\n"})
    assert bounded_diff(repo, base, head).first_commit_subject == "Add the retry helper"
    assert bounded_diff(repo, head, head).first_commit_subject is None  # an empty range names no change


def test_bad_inputs(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        bounded_diff(repo, "HEAD", "no-such-rev")
    with pytest.raises(NotFoundError):
        bounded_diff(tmp_path / "missing", "HEAD", "HEAD")
    with pytest.raises(ValidationFailedError):
        bounded_diff(repo, "HEAD", "HEAD", max_bytes=10)
    with pytest.raises(ValidationFailedError):
        bounded_diff(repo, "--output=/tmp/x", "HEAD")
    git(repo, "checkout", "-q", "--orphan", "island")
    commit(repo, "unrelated", {"z.txt": "z\n"})
    with pytest.raises(ValidationFailedError, match="shares no history"):
        run_branch_diff(repo, "island", "main")


def test_one_unified_diff_reader_serves_the_bound_and_the_offline_companion() -> None:
    from baton.domain.unified_diff import count_file_headers, parse_unified_diff

    text = (
        "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1,2 @@\n-x = 1\n+x = 2\n+# TODO: y\n"
        "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    )
    assert count_file_headers(text.encode()) == 2
    app, old, listed = parse_unified_diff(text, ["app.py", "unseen.py"])
    assert (app.path, app.added, app.removed, app.todo_lines) == ("app.py", 2, 1, ["# TODO: y"])
    assert (old.deleted, old.removed, old.in_diff) == (True, 1, True)
    assert (listed.path, listed.in_diff) == ("unseen.py", False)
