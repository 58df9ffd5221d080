"""How long the oldest parked gate has waited (`ParkedGates`, `OldestParkedGateAgeSeconds`), and per kind
of pause how long its oldest pending item has waited (`PendingItems`, `OldestPendingAgeSeconds`,
dimension `kind`: question, ask, await, interrupt, review, tool_approval).

The `reconcile` Lambda (scheduled every minute) publishes both after each pass, so the "gates parked
too long" alarm fires while a gate is still waiting, not only once its timeout has fired. The parked
waits come from `WaitStore.list_parked()` (a Query on the sparse `pending` index, no Scan).

Metrics are CloudWatch embedded-metric-format lines (Powertools EphemeralMetrics): namespace from
`POWERTOOLS_METRICS_NAMESPACE` (the CDK stack sets `Baton/<team>`; `Baton` elsewhere), dimension
`service=baton` — the alarm in `infra/capabilities/observability.py` reads exactly these. The pending
ages come from two Queries per kind on the sparse pending index (`PENDING#<kind>`, never a Scan): the
oldest one (`InteractionStore.oldest_pending`, one item) and the count (`count_pending`, `Select=COUNT`:
no item returned or decoded), so a pass reads one item per kind however many are pending; published as
one EMF line per kind with
dimensions `service` and `kind`; the per-kind alarms sit beside the parked-gate one. Locally the same
ages show in `baton runs` (`PendingAge.text`) and on every inbox item (`waited_s`).

How long an answer took, once it is given: `baton.runtime.answer_times`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from baton.ids import parse_iso

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from baton.ports import InteractionStore, WaitStore

METRIC_OLDEST_AGE = "OldestParkedGateAgeSeconds"
METRIC_PARKED_COUNT = "ParkedGates"
METRIC_OLDEST_PENDING_AGE = "OldestPendingAgeSeconds"
METRIC_PENDING_COUNT = "PendingItems"
KIND_DIMENSION = "kind"
SERVICE = "baton"
# Every kind of pause (`baton.models.InteractionKind`, the inbox's kinds; a test holds them equal, as the
# reconcile function may not load the records at import): the alarms and the dashboard's widgets are
# made per kind from this list.
PENDING_KINDS: tuple[str, ...] = ("question", "ask", "await", "interrupt", "review", "tool_approval")


@dataclass(frozen=True)
class ParkedAge:
    count: int
    oldest_age_seconds: int  # 0 when nothing is parked
    oldest_run_id: str | None = None
    oldest_gate: str | None = None


def parked_age(waits: WaitStore, now: datetime) -> ParkedAge:
    """The number of parked waits and the age of the oldest one (never negative)."""
    parked = waits.list_parked()
    if not parked:
        return ParkedAge(count=0, oldest_age_seconds=0)
    oldest = min(parked, key=lambda w: parse_iso(w.parked_at))
    age = max(0, int((now - parse_iso(oldest.parked_at)).total_seconds()))
    return ParkedAge(count=len(parked), oldest_age_seconds=age, oldest_run_id=oldest.run_id, oldest_gate=oldest.gate)


def new_metrics() -> EphemeralMetrics:
    """Its own metric set (EphemeralMetrics), so flushing it never flushes another module's metrics."""
    namespace = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Baton"
    return EphemeralMetrics(namespace=namespace, service=SERVICE)


def publish(age: ParkedAge, metrics: EphemeralMetrics | None = None) -> EphemeralMetrics:
    """Add both metrics and flush them (one EMF line on stdout). Returns the Metrics used."""
    used = metrics or new_metrics()
    used.add_metric(name=METRIC_OLDEST_AGE, unit=MetricUnit.Seconds, value=age.oldest_age_seconds)
    used.add_metric(name=METRIC_PARKED_COUNT, unit=MetricUnit.Count, value=age.count)
    used.flush_metrics()
    return used


@dataclass(frozen=True)
class PendingAge:
    kind: str
    count: int
    oldest_age_seconds: int  # 0 when nothing of this kind is pending
    oldest_run_id: str | None = None

    def text(self) -> str:
        """ "question: 3 pending, oldest 5m (run r1)" — what `baton runs` prints."""
        if not self.count:
            return f"{self.kind}: none pending"
        return f"{self.kind}: {self.count} pending, oldest {_short(self.oldest_age_seconds)} (run {self.oldest_run_id})"


def _short(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def pending_ages(store: InteractionStore, now: datetime, kinds: Sequence[str] = PENDING_KINDS) -> list[PendingAge]:
    """For each kind of pause: how many are pending and how long the oldest has waited (never negative)."""
    ages = []
    for kind in kinds:
        oldest = store.oldest_pending(kind)
        if oldest is None:
            ages.append(PendingAge(kind=kind, count=0, oldest_age_seconds=0))
            continue
        age = max(0, int((now - parse_iso(oldest.created_at)).total_seconds()))
        count = store.count_pending(kind)
        ages.append(PendingAge(kind=kind, count=count, oldest_age_seconds=age, oldest_run_id=oldest.run_id))
    return ages


def publish_pending(ages: list[PendingAge]) -> list[EphemeralMetrics]:
    """One EMF line per kind (dimensions service and kind): the oldest pending age and the count."""
    published = []
    for age in ages:
        metrics = new_metrics()
        metrics.add_dimension(name=KIND_DIMENSION, value=age.kind)
        metrics.add_metric(name=METRIC_OLDEST_PENDING_AGE, unit=MetricUnit.Seconds, value=age.oldest_age_seconds)
        metrics.add_metric(name=METRIC_PENDING_COUNT, unit=MetricUnit.Count, value=age.count)
        metrics.flush_metrics()
        published.append(metrics)
    return published
