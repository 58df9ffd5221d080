"""observability: alarms (Lambda errors, failed / timed-out executions, gates that waited their whole
timeout, API 5xx) to the alarms topic, and one dashboard per team environment.

"Parked too long", twice:
- while it waits: the `reconcile` Lambda (every minute) publishes `OldestParkedGateAgeSeconds` and
  `ParkedGates` (`Baton/<team>`, dimension service=baton; see `baton.runtime.parked_age`); the
  `oldest-parked-gate` alarm fires when the oldest parked gate has waited longer than
  `parked_gate_alarm_hours` (context, default 24);
- per kind of pause, while it waits: the same Lambda publishes `OldestPendingAgeSeconds` and
  `PendingItems` (dimensions service and kind); an `oldest-pending-<kind>` alarm per kind fires when the
  oldest pending item of that kind has waited longer than `pending_age_alarm_minutes` (context, default
  240; `pending_age_alarm_minutes_by_kind` per kind), and, when `pending_count_alarm_threshold` is set,
  a `pending-<kind>-count` alarm when that many are pending at once;
- after the fact: every token wait has a mandatory timeout, and a metric filter on each state
  machine's log counts `TaskTimedOut` events (`GateTimeouts`) for the `gates-parked-too-long` alarm.

The dashboard shows the Waits page's figures per kind (`GET /api/stats/waits`): pending now and the
oldest age (the metrics above), and over the last day and week the answer time's p50/p95
(`AnswerTimeSeconds`, logged by whichever function writes an answer: `baton.runtime.answer_times`) and
the deadlines met and missed (`DeadlinesMet`, `DeadlinesMissed`: Sum), each widget over its own window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from baton.runtime.answer_times import METRIC_ANSWER_TIME, METRIC_DEADLINES_MET, METRIC_DEADLINES_MISSED
from baton.runtime.parked_age import (
    KIND_DIMENSION,
    METRIC_OLDEST_AGE,
    METRIC_OLDEST_PENDING_AGE,
    METRIC_PARKED_COUNT,
    METRIC_PENDING_COUNT,
    PENDING_KINDS,
)
from baton.runtime.parked_age import SERVICE as METRICS_SERVICE

if TYPE_CHECKING:
    from collections.abc import Mapping

    from infra.config import TeamConfig

PERIOD = Duration.minutes(5)
GATE_TIMEOUTS = "GateTimeouts"
# The Waits page's windows, as widget time ranges (ISO 8601 durations back from now).
ANSWER_WINDOWS = {"day": "-P1D", "week": "-P7D"}


def _pascal(kind: str) -> str:
    """A kind in a construct id: "tool_approval" -> "ToolApproval" (the others keep their ids: "Question")."""
    return "".join(part.capitalize() for part in kind.split("_"))


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        alarm_topic: sns.ITopic,
        functions: Mapping[str, lambda_.Function],
        state_machines: Mapping[str, sfn.StateMachine],
        state_machine_logs: Mapping[str, logs.ILogGroup],
        apis: Mapping[str, apigw.RestApi],
    ) -> None:
        super().__init__(scope, construct_id)
        self.alarms: list[cw.Alarm] = []
        action = cw_actions.SnsAction(alarm_topic)
        namespace = f"Baton/{config.team}"

        def alarm(construct_id: str, name: str, metric: cw.IMetric, description: str, threshold: float = 1) -> cw.Alarm:
            created = cw.Alarm(
                self,
                construct_id,
                alarm_name=f"{config.prefix}-{name}",
                alarm_description=description,
                metric=metric,
                threshold=threshold,
                evaluation_periods=1,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
            created.add_alarm_action(action)
            self.alarms.append(created)
            return created

        for name, fn in functions.items():
            alarm(
                f"{name}Errors",
                f"{name}-errors",
                fn.metric_errors(period=PERIOD, statistic="Sum"),
                f"Lambda {fn.node.id} raised errors",
            )

        for workflow, machine in state_machines.items():
            alarm(
                f"{workflow}Failed",
                f"{workflow}-failed",
                machine.metric_failed(period=PERIOD, statistic="Sum"),
                f"Executions of {workflow} failed (a gate timing out also ends in Fail)",
            )
            alarm(
                f"{workflow}TimedOut",
                f"{workflow}-timed-out",
                machine.metric_timed_out(period=PERIOD, statistic="Sum"),
                f"Executions of {workflow} hit their state machine timeout",
            )
            logs.MetricFilter(
                self,
                f"{workflow}GateTimeoutFilter",
                log_group=state_machine_logs[workflow],
                metric_namespace=namespace,
                metric_name=GATE_TIMEOUTS,
                filter_pattern=logs.FilterPattern.string_value("$.type", "=", "TaskTimedOut"),
                metric_value="1",
                default_value=0,
            )
        gate_timeout_metric = cw.Metric(namespace=namespace, metric_name=GATE_TIMEOUTS, period=PERIOD, statistic="Sum")
        alarm(
            "GatesParkedTooLong",
            "gates-parked-too-long",
            gate_timeout_metric,
            "A gate waited its whole timeout with no answer (TaskTimedOut in a Baton state machine log)",
            threshold=config.gate_timeout_alarm_threshold,
        )
        # Published every minute by the reconcile Lambda; Maximum over 5 minutes of the oldest age.
        metric_dimensions = {"service": METRICS_SERVICE}
        oldest_parked_metric = cw.Metric(
            namespace=namespace,
            metric_name=METRIC_OLDEST_AGE,
            dimensions_map=metric_dimensions,
            period=PERIOD,
            statistic="Maximum",
        )
        parked_count_metric = cw.Metric(
            namespace=namespace,
            metric_name=METRIC_PARKED_COUNT,
            dimensions_map=metric_dimensions,
            period=PERIOD,
            statistic="Maximum",
        )
        hours = config.parked_gate_alarm_hours
        self.oldest_parked_alarm = alarm(
            "OldestParkedGate",
            "oldest-parked-gate",
            oldest_parked_metric,
            f"A gate has been parked for more than {hours} h and is still waiting for an operator "
            "(OldestParkedGateAgeSeconds, published by the reconcile Lambda)",
            threshold=hours * 3600,
        )
        pending_age_metrics: list[cw.IMetric] = []
        pending_count_metrics: list[cw.IMetric] = []
        for kind in PENDING_KINDS:
            by_kind = {"service": METRICS_SERVICE, KIND_DIMENSION: kind}
            age_metric = cw.Metric(
                namespace=namespace,
                metric_name=METRIC_OLDEST_PENDING_AGE,
                dimensions_map=by_kind,
                period=PERIOD,
                statistic="Maximum",
            )
            # a labelled metric makes the alarm a metric-math one: the label is the dashboard's only
            pending_age_metrics.append(age_metric.with_(label=f"oldest pending {kind} (s)"))
            seconds = config.pending_age_alarm_seconds(kind)
            alarm(
                f"OldestPending{_pascal(kind)}",
                f"oldest-pending-{kind}",
                age_metric,
                f"A pending {kind} has waited more than {seconds // 60} min for an operator "
                "(OldestPendingAgeSeconds, published by the reconcile Lambda)",
                threshold=seconds,
            )
            count_metric = cw.Metric(
                namespace=namespace,
                metric_name=METRIC_PENDING_COUNT,
                dimensions_map=by_kind,
                period=PERIOD,
                statistic="Maximum",
            )
            pending_count_metrics.append(count_metric.with_(label=f"pending {kind}"))
            if config.pending_count_alarm_threshold:
                alarm(
                    f"Pending{_pascal(kind)}Count",
                    f"pending-{kind}-count",
                    count_metric,
                    f"{config.pending_count_alarm_threshold} or more {kind} items are pending at once",
                    threshold=config.pending_count_alarm_threshold,
                )
        for name, api in apis.items():
            alarm(
                f"{name}ServerErrors",
                f"{name}-5xx",
                api.metric_server_error(period=PERIOD, statistic="Sum"),
                f"The {name} REST API returned 5xx responses",
            )

        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=config.prefix)
        self.dashboard.add_widgets(
            cw.GraphWidget(
                title="Lambda errors",
                left=[fn.metric_errors(period=PERIOD, label=name) for name, fn in functions.items()],
                width=12,
            ),
            cw.GraphWidget(
                title="Lambda duration p95",
                left=[fn.metric_duration(period=PERIOD, statistic="p95", label=name) for name, fn in functions.items()],
                width=12,
            ),
        )
        for workflow, machine in state_machines.items():
            self.dashboard.add_widgets(
                cw.GraphWidget(
                    title=f"{workflow} executions",
                    left=[
                        machine.metric_started(period=PERIOD, label="started"),
                        machine.metric_succeeded(period=PERIOD, label="succeeded"),
                        machine.metric_failed(period=PERIOD, label="failed"),
                        machine.metric_timed_out(period=PERIOD, label="timed out"),
                    ],
                    width=12,
                ),
            )
        self.dashboard.add_widgets(
            cw.GraphWidget(title="Gates that timed out", left=[gate_timeout_metric], width=12),
            cw.GraphWidget(
                title="Parked gates: oldest age (s) and count",
                left=[oldest_parked_metric.with_(label="oldest parked gate (s)")],
                right=[parked_count_metric.with_(label="parked gates")],
                left_annotations=[cw.HorizontalAnnotation(value=hours * 3600, label=f"alarm ({hours} h)")],
                width=12,
            ),
        )
        # The figures of the inbox's Waits page that metrics carry (GET /api/stats/waits has the rest:
        # per workflow, the oldest items, answer times): now, and over time.
        self.dashboard.add_widgets(
            cw.SingleValueWidget(title="Pending now per kind", metrics=pending_count_metrics, width=12),
            cw.SingleValueWidget(title="Oldest pending per kind (s)", metrics=pending_age_metrics, width=12),
        )
        self.dashboard.add_widgets(
            cw.GraphWidget(title="Oldest pending item per kind (s)", left=pending_age_metrics, width=12),
            cw.GraphWidget(title="Pending items per kind", left=pending_count_metrics, width=12),
        )
        self._add_answer_widgets(namespace)
        self.dashboard.add_widgets(
            *[
                cw.GraphWidget(
                    title=f"{name} API",
                    left=[api.metric_count(period=PERIOD), api.metric_client_error(period=PERIOD)],
                    right=[api.metric_server_error(period=PERIOD), api.metric_latency(period=PERIOD, statistic="p95")],
                    width=12,
                )
                for name, api in apis.items()
            ],
            cw.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms), width=24),
        )

    def _add_answer_widgets(self, namespace: str) -> None:
        """Per kind, over the last day and the last week (each widget's own window, whatever the
        dashboard's range): the answer time's p50 and p95, and the deadlines met and missed."""

        def by_kind(name: str, kind: str, statistic: str, label: str) -> cw.Metric:
            dimensions = {"service": METRICS_SERVICE, KIND_DIMENSION: kind}
            return cw.Metric(
                namespace=namespace, metric_name=name, dimensions_map=dimensions, statistic=statistic, label=label
            )

        for window, start in ANSWER_WINDOWS.items():
            times = [
                by_kind(METRIC_ANSWER_TIME, kind, stat, f"{kind} {stat}")
                for kind in PENDING_KINDS
                for stat in ("p50", "p95")
            ]
            deadlines = [
                by_kind(name, kind, "Sum", f"{kind} {word}")
                for kind in PENDING_KINDS
                for name, word in ((METRIC_DEADLINES_MET, "met"), (METRIC_DEADLINES_MISSED, "missed"))
            ]
            self.dashboard.add_widgets(
                cw.SingleValueWidget(
                    title=f"Answer time per kind, last {window} (s)",
                    metrics=times,
                    start=start,
                    set_period_to_time_range=True,
                    width=12,
                ),
                cw.SingleValueWidget(
                    title=f"Deadlines met and missed per kind, last {window}",
                    metrics=deadlines,
                    start=start,
                    set_period_to_time_range=True,
                    width=12,
                ),
            )
