"""The one reader of unified diffs (`git diff` output): per-file facts for the offline companion
(`baton/adapters/companion_offline.py`), the file-header count the diff bound uses
(`baton/merge/diff.py`), and each file's part of a bounded diff for the review screen (`file_diffs`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

FILE_HEADER = "diff --git "
_FILE_HEADER_BYTES = FILE_HEADER.encode()
_HEADER_PATHS = re.compile(r"^diff --git a/(.+?) b/(.+)$")
_TODO = re.compile(r"\b(TODO|FIXME|XXX)\b")
# A bare "=======" is ignored: it is also a heading underline.
_CONFLICT = re.compile(r"^(<{7}|>{7})(\s|$)")
_MAX_TODO_LINES = 3


class FileChange(BaseModel):
    """What one file's part of a diff shows."""

    path: str
    added: int = 0
    removed: int = 0
    new: bool = False
    deleted: bool = False
    renamed_from: str | None = Field(default=None, description="a rename's old path")
    in_diff: bool = Field(default=False, description="False for a file listed in the stats but not in the text")
    todo_lines: list[str] = Field(default_factory=list, description="the first added TODO/FIXME/XXX lines")
    conflict_markers: int = Field(default=0, description="added lines starting with a git conflict marker")


def count_file_headers(data: bytes) -> int:
    """How many files a (possibly cut) unified diff starts."""
    return data.count(b"\n" + _FILE_HEADER_BYTES) + (1 if data.startswith(_FILE_HEADER_BYTES) else 0)


def _header_path(line: str) -> str:
    match = _HEADER_PATHS.match(line)
    return match.group(2) if match else line.split()[-1]


def _read_preamble(change: FileChange, line: str) -> bool:
    """A line between the file header and the first hunk; True once the first hunk starts."""
    if line.startswith("new file mode"):
        change.new = True
    elif line.startswith("deleted file mode"):
        change.deleted = True
    elif line.startswith("rename from "):
        change.renamed_from = line[len("rename from ") :]
    return line.startswith("@@")


def _read_hunk_line(change: FileChange, line: str) -> None:
    if line.startswith("+"):
        change.added += 1
        body = line[1:]
        if _CONFLICT.match(body):
            change.conflict_markers += 1
        if _TODO.search(body) and len(change.todo_lines) < _MAX_TODO_LINES:
            change.todo_lines.append(body.strip()[:120])
    elif line.startswith("-"):
        change.removed += 1


def parse_unified_diff(text: str, listed: list[str] | None = None) -> list[FileChange]:
    """Per-file facts from a unified diff, merged with a list of changed paths (order: diff, then list)."""
    changes: dict[str, FileChange] = {}
    current: FileChange | None = None
    in_hunk = False
    for line in text.splitlines():
        if line.startswith(FILE_HEADER):
            path = _header_path(line)
            current = changes.setdefault(path, FileChange(path=path))
            current.in_diff = True
            in_hunk = False
        elif current is None:
            continue
        elif not in_hunk:
            in_hunk = _read_preamble(current, line)
        elif not line.startswith("@@"):
            _read_hunk_line(current, line)
    for path in listed or []:
        changes.setdefault(path, FileChange(path=path))
    return list(changes.values())


class FileDiff(FileChange):
    """One file's part of a bounded diff: its facts, its text, and whether the cut took some or all of it."""

    text: str = Field(default="", description="from its `diff --git` header on; empty when the cut fell before it")
    truncated: bool = False

    @property
    def status(self) -> Literal["added", "modified", "deleted", "renamed"] | None:
        """None for a file the cut left out: its part of the diff is not there to say."""
        if not self.in_diff:
            return None
        return "added" if self.new else "deleted" if self.deleted else "renamed" if self.renamed_from else "modified"


def _split_by_file(text: str) -> list[str]:
    """Each file's part of a unified diff, from its `diff --git` header on (text before the first is dropped)."""
    parts: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith(FILE_HEADER):
            parts.append(line)
        elif parts:
            parts[-1] += line
    return parts


def file_diffs(text: str, files: list[str], *, truncated: bool) -> list[FileDiff]:
    """Per file, in the diff's order and then the listed files the cut left out: a truncated diff's last
    shown part loses the marker line and is marked cut, and every file after the cut is marked too."""
    parts = _split_by_file(text)
    if truncated and parts:
        kept = parts[-1].rstrip("\n").rpartition("\n")[0]  # the marker is the bounded text's last line
        parts[-1] = kept + "\n" if kept else ""
    shown: list[FileDiff] = []
    for n, part in enumerate(parts):
        change = parse_unified_diff(part)[0] if part else None
        if change is not None:
            last = n == len(parts) - 1
            shown.append(FileDiff(**change.model_dump(), text=part, truncated=truncated and last))
    seen = {f.path for f in shown}
    return shown + [FileDiff(path=p, truncated=True) for p in files if p not in seen]
