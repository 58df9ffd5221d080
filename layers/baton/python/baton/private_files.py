"""Files that hold credentials (the local stack's bearer token in `.baton/local.json`, task tokens in its
snapshot and journal, signed answer links in its outbox) and the folders they live in: the owner's only.

A file is created with mode 0600 (by `os.open`, never chmod-ed after writing: no moment when another user
could open it), a folder 0700; a folder made looser before (by an older Baton, or by hand) is tightened."""

from __future__ import annotations

import os
import stat
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def private_dir(path: Path) -> Path:
    """`path` as a folder only its owner can enter: created 0700, or tightened to 0700 if it exists."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    if path.stat().st_mode & _OTHERS:
        path.chmod(PRIVATE_DIR_MODE)
    return path


def tighten(folder: Path) -> None:
    """`folder`, if there is one, made 0700 and the files directly in it 0600 (an older Baton wrote some
    readable by others)."""
    if not folder.is_dir():
        return
    private_dir(folder)
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mode & _OTHERS:
            os.chmod(entry.path, PRIVATE_FILE_MODE)


def write_private(path: Path, text: str, *, durable: bool = False) -> None:
    """Write `path` whole, 0600: to a temporary file beside it created with that mode, then renamed into
    place, so a reader (the CLI, the SDK, a test waiting for the stack) never sees it half written.
    `durable`: on the disk before the rename (the local stack's snapshot, which its journal is dropped for)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.unlink(missing_ok=True)  # one a crash left: O_EXCL below creates the file, with our mode
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
