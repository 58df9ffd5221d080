"""Test doubles of the ports in `baton/ports.py` and `baton/review_ports.py`. Tests only: nothing shipped
imports them."""

from __future__ import annotations

from tests.fakes.builds import MemoryBuildRecords, RecordingBuildRunner
from tests.fakes.memory import FakeWorkflows, MemoryStore, RecordingTaskTokens
from tests.fakes.notifier import RecordingNotifier
from tests.fakes.timers import RecordingDeadlineTimers

__all__ = [
    "FakeWorkflows",
    "MemoryBuildRecords",
    "MemoryStore",
    "RecordingBuildRunner",
    "RecordingDeadlineTimers",
    "RecordingNotifier",
    "RecordingTaskTokens",
]
