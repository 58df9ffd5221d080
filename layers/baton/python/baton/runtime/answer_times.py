"""How long a person took to answer, per kind of pause, as CloudWatch metrics: when an item stops waiting,
one embedded-metric-format line (Powertools EphemeralMetrics; the Lambda's log line is the metric, no AWS
call) with dimensions `service` and `kind`:
- `AnswerTimeSeconds`: created to answered, when a person answered it (the dashboard's p50/p95);
- `DeadlinesMet` / `DeadlinesMissed`: 1 or 0 (Sum per kind); timed out, or its default taken at the
  deadline, is a deadline missed; an item with no deadline counts in neither.
The same figures, item by item, as the Waits page (`baton.domain.wait_times.answer_window`). The run, the
item and its node are metadata, not dimensions (each dimension value would be a metric of its own).

Written from the one write every kind's answer, quorum decision, default and timeout goes through
(`InteractionStore.transition_interaction`, baton/adapters/dynamo_interactions.py), once, after the write
won: a losing answer, a claim, a run's stop write nothing. Loaded only there (not at any handler's
import), so it may use the records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import MetricUnit

from baton.domain.approval import answered_by_rule
from baton.domain.ladder import TIMED_OUT_DEFAULT
from baton.domain.wait_times import seconds_between, settled_at
from baton.runtime.parked_age import KIND_DIMENSION, new_metrics

if TYPE_CHECKING:
    from aws_lambda_powertools.metrics import EphemeralMetrics

    from baton.models import Interaction

METRIC_ANSWER_TIME = "AnswerTimeSeconds"
METRIC_DEADLINES_MET = "DeadlinesMet"
METRIC_DEADLINES_MISSED = "DeadlinesMissed"


@dataclass(frozen=True)
class Settled:
    """How one item stopped waiting, as the Waits page counts it: answered by a person (in how many
    seconds; before its deadline when it had one), or not (timed out, or its default taken at the deadline:
    a deadline missed)."""

    kind: str
    answer_seconds: int | None  # None: nobody answered it
    deadline_met: bool | None  # None: answered with no deadline to meet


def settled(before: Interaction, after: Interaction) -> Settled | None:
    """What the write from `before` to `after` settled; None unless a pending item was answered or timed
    out (a claim, a run's stop, a consumed or re-opened item: nobody's wait ended here)."""
    st = after.state
    if before.state.status != "pending" or st.status not in {"answered", "timed_out"}:
        return None
    at = settled_at(after)  # as the Waits page dates it
    if st.status == "timed_out" or st.reason == TIMED_OUT_DEFAULT:
        return Settled(kind=after.kind, answer_seconds=None, deadline_met=False)
    if answered_by_rule(st.answered_by):
        return None  # a rule or a grant decided it at once: nobody waited
    seconds = seconds_between(at, after.created_at)
    met = None if after.expires_at is None else at <= after.expires_at
    return Settled(kind=after.kind, answer_seconds=seconds, deadline_met=met)


def publish_settled(before: Interaction, after: Interaction) -> EphemeralMetrics | None:
    """One EMF line (dimension kind) when the write settled an item; None (nothing written) else."""
    found = settled(before, after)
    if found is None:
        return None
    metrics = new_metrics()
    metrics.add_dimension(name=KIND_DIMENSION, value=found.kind)
    if found.answer_seconds is not None:
        metrics.add_metric(name=METRIC_ANSWER_TIME, unit=MetricUnit.Seconds, value=found.answer_seconds)
    if found.deadline_met is not None:
        metrics.add_metric(name=METRIC_DEADLINES_MET, unit=MetricUnit.Count, value=int(found.deadline_met))
        metrics.add_metric(name=METRIC_DEADLINES_MISSED, unit=MetricUnit.Count, value=int(not found.deadline_met))
    for key, value in (("run_id", after.run_id), ("interaction_id", after.interaction_id), ("node", after.node)):
        metrics.add_metadata(key=key, value=value)
    metrics.flush_metrics()
    return metrics
