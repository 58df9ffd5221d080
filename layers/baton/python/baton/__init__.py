"""Baton: human-in-the-loop gates for AI agent workflows on AWS."""

from __future__ import annotations

__version__ = "0.1.0"
