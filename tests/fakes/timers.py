"""The gates' timers, recorded (the `DeadlineTimers` port): a test fires them by hand at the time it
chooses, through `baton.services.deadlines.Deadlines`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.domain.gate_payloads import GateDeadlinePayload


@dataclass
class StartedTimer:
    name: str
    payload: GateDeadlinePayload
    wait_seconds: int


@dataclass
class RecordingDeadlineTimers:
    started: list[StartedTimer] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)

    def start(self, name: str, payload: GateDeadlinePayload, wait_seconds: int) -> None:
        if any(t.name == name for t in self.started):
            return  # as Step Functions: an execution name is started once
        self.started.append(StartedTimer(name, payload, wait_seconds))

    def stop(self, name: str) -> None:
        self.stopped.append(name)
