"""The JSON-RPC error answer, shared by the server and its tasks (baton/mcp/tasks.py)."""

from __future__ import annotations

from typing import Any


class McpError(Exception):
    """A JSON-RPC error answer (the request itself was wrong, not the tool's work)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data
