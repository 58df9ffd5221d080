"""The policy sources that reload: deployed, an SSM parameter (`baton.adapters.ssm_policy.ParameterPolicy`);
locally, a file (`FilePolicy`, `baton dev --policy FILE`). `baton.runtime.wiring.policy_source(settings)`
picks the one the environment names.

Both follow the same rules (`ReloadingPolicy`): a new version is taken only if `Policy.load` accepts it; a
bad one is logged with its problems (once per version) and counted (the `PolicyRejected` metric), and the
last good policy stays in force; when the first version ever read is bad there is no policy (every call
goes to a person). A read that fails (throttled, network, a missing file) keeps the last good one too."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from baton.runtime.observability import logger

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from baton.contracts.policy import PolicyMode
    from baton.policy.engine import Policy

REJECTED_METRIC = "PolicyRejected"
DEFAULT_TTL_SECONDS = 30.0


@dataclass(frozen=True)
class Snapshot:
    """The source as read now: `key` tells one version from the next; `version` is `Policy.version`
    (None: the text's own hash)."""

    key: str
    text: str
    version: str | None = None


class ReloadingPolicy:
    """The rules shared by the reloading sources; a subclass says only how to read (`_read`) and which
    errors are a failed read (`read_errors`: the last good policy stays in force)."""

    read_errors: ClassVar[tuple[type[Exception], ...]] = (OSError,)

    def __init__(self, *, mode: PolicyMode, ttl_seconds: float, clock: Callable[[], float], describe: str) -> None:
        self.mode: PolicyMode = mode
        self._ttl = ttl_seconds
        self._clock = clock
        self._describe = describe
        self._good: Policy | None = None
        self._last_key: str | None = None  # the last version tried, taken or refused: never tried twice
        self._next_read: float | None = None

    def current(self) -> Policy | None:
        now = self._clock()
        if self._next_read is not None and now < self._next_read:
            return self._good
        self._next_read = now + self._ttl
        try:
            snapshot = self._read(self._last_key)
        except self.read_errors as err:
            logger.warning(
                "policy not re-read: the last good one stays in force",
                extra={"policy_source": self._describe, "error": f"{type(err).__name__}: {err}"},
            )
            return self._good
        if snapshot is not None and snapshot.key != self._last_key:
            self._last_key = snapshot.key
            self._take(snapshot)
        return self._good

    def _take(self, snapshot: Snapshot) -> None:
        from baton.policy.engine import Policy, PolicyError  # cedarpy: only once a policy is configured

        try:
            self._good = Policy.load(snapshot.text, mode=self.mode, version=snapshot.version)
        except PolicyError as err:
            kept = self._good.version if self._good else None
            self.rejected(snapshot.key, err.problems, kept)

    def rejected(self, key: str, problems: list[str], kept: str | None) -> None:
        """A version that does not load: logged with its problems, counted; `kept` is the version in force."""
        in_force = f"policy {kept} stays in force" if kept else "no policy: every call goes to a person"
        logger.error(
            f"policy {key} refused ({in_force})",
            extra={"policy_source": self._describe, "problems": problems, "policy_in_force": kept},
        )
        _count_rejected()

    def _read(self, last_key: str | None) -> Snapshot | None:
        """The source now, or None when the source can tell it is still `last_key` without reading it."""
        raise NotImplementedError


class FilePolicy(ReloadingPolicy):
    """A policy file, re-read when its modification time changes (checked on every call by default:
    one `stat`); its version is the text's hash, as `baton policy check` prints it."""

    read_errors = (OSError, UnicodeDecodeError)  # a missing or unreadable file, a half-written edit

    def __init__(
        self,
        path: Path,
        *,
        mode: PolicyMode = "enforce",
        ttl_seconds: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(mode=mode, ttl_seconds=ttl_seconds, clock=clock, describe=f"file:{path}")
        self.path = path

    def _read(self, last_key: str | None) -> Snapshot | None:
        key = f"file:{self.path}:{self.path.stat().st_mtime_ns}"
        return None if key == last_key else Snapshot(key=key, text=self.path.read_text(encoding="utf-8"))


def _count_rejected() -> None:
    # Its own metric set, flushed at once (one EMF line): no handler's metrics are flushed with it.
    from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

    metrics = EphemeralMetrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Baton", service="baton")
    metrics.add_metric(name=REJECTED_METRIC, unit=MetricUnit.Count, value=1)
    metrics.flush_metrics()
