"""Baton: human-in-the-loop gates for AI agent workflows on AWS."""

from __future__ import annotations

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # `baton.Client` without importing httpx for every Lambda that imports the package.
    if name == "Client":
        from baton.client import Client

        return Client
    raise AttributeError(name)
