"""How long the oldest parked gate has waited: `ParkedGates` and `OldestParkedGateAgeSeconds`.

The `reconcile` Lambda (scheduled every minute) publishes both after each pass, so the "gates parked
too long" alarm fires while a gate is still waiting, not only once its timeout has fired. The parked
waits come from `WaitStore.list_parked()` (a Query on the sparse `pending` index, no Scan).

Metrics are CloudWatch embedded-metric-format lines (Powertools EphemeralMetrics): namespace from
`POWERTOOLS_METRICS_NAMESPACE` (the CDK stack sets `Baton/<team>`; `Baton` elsewhere), dimension
`service=baton` — the alarm in `infra/capabilities/observability.py` reads exactly these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from baton.ids import parse_iso

if TYPE_CHECKING:
    from datetime import datetime

    from baton.ports import WaitStore

METRIC_OLDEST_AGE = "OldestParkedGateAgeSeconds"
METRIC_PARKED_COUNT = "ParkedGates"
SERVICE = "baton"


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
