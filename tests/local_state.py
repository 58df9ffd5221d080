"""What the local stack leaves on disk and on its ports, as tests look at them."""

from __future__ import annotations

import os
import socket
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def loose_modes(root: Path) -> list[str]:
    """Every path under `root` (itself included) whose mode is not the owner's only (0700 for a folder,
    0600 for a file), with that mode."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in [".", *dirs, *files]:
            path = os.path.join(folder, name)
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            expected = 0o700 if os.path.isdir(path) else 0o600
            if mode != expected:
                found.append(f"{os.path.relpath(path, root)} {mode:o}")
    return found


def time_wait_port(host: str = "127.0.0.1") -> int:
    """A port with nothing listening but a connection in TIME_WAIT on it, as a stack leaves it when it
    stops or crashes with a client connected: the server's side closes first."""
    listener = socket.create_server((host, 0))
    port: int = listener.getsockname()[1]
    client = socket.create_connection((host, port))
    accepted, _ = listener.accept()
    accepted.close()
    client.close()
    listener.close()
    return port
