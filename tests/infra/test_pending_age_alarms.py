"""The pending-age alarms in the team stack (infra/capabilities/observability.py): per kind of pause, an
alarm on the oldest pending item's age with the threshold from context, and (context
`pending_count_alarm_threshold`) one on the count pending, beside the parked-gate alarm; the reconcile
Lambda, which publishes the metrics, reads the pending index (its table grant) and nothing else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match

from baton.runtime.parked_age import PENDING_KINDS
from infra.config import TeamConfig
from tests.infra.conftest import PREFIX, TEAM, resources


def _alarms(cfn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["Properties"]["AlarmName"]: a["Properties"] for a in resources(cfn, "AWS::CloudWatch::Alarm").values()}


def test_one_oldest_pending_alarm_per_kind_with_its_threshold(cfn: dict[str, Any], template: Any) -> None:
    alarms = _alarms(cfn)
    for kind in PENDING_KINDS:
        template.has_resource_properties(
            "AWS::CloudWatch::Alarm",
            {
                "AlarmName": f"{PREFIX}-oldest-pending-{kind}",
                "Namespace": f"Baton/{TEAM}",
                "MetricName": "OldestPendingAgeSeconds",
                "Statistic": "Maximum",
                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                "AlarmActions": Match.any_value(),
            },
        )
        dimensions = alarms[f"{PREFIX}-oldest-pending-{kind}"]["Dimensions"]
        assert sorted((d["Name"], d["Value"]) for d in dimensions) == [("kind", kind), ("service", "baton")]
        expected = 480 * 60 if kind == "review" else 240 * 60  # the context's review override, else the default
        assert alarms[f"{PREFIX}-oldest-pending-{kind}"]["Threshold"] == expected
    assert f"{PREFIX}-oldest-parked-gate" in alarms  # beside the parked-gate alarm, not instead of it


def test_count_alarms_follow_the_context_threshold(cfn: dict[str, Any]) -> None:
    alarms = _alarms(cfn)
    for kind in PENDING_KINDS:
        counted = alarms[f"{PREFIX}-pending-{kind}-count"]
        assert counted["MetricName"] == "PendingItems" and counted["Threshold"] == 25
    assert TeamConfig(team="x").pending_count_alarm_threshold == 0  # off unless the context asks


def test_dashboard_graphs_the_pending_ages(cfn: dict[str, Any]) -> None:
    (dashboard,) = resources(cfn, "AWS::CloudWatch::Dashboard").values()
    body = str(dashboard["Properties"]["DashboardBody"])
    assert "OldestPendingAgeSeconds" in body and "Oldest pending item per kind" in body


def test_dashboard_shows_the_waits_pages_figures_from_the_pending_metrics(cfn: dict[str, Any]) -> None:
    """The Waits page's per-kind figures (count and oldest age), now and over time, from the metrics the
    reconcile Lambda publishes whether or not a count alarm is configured."""
    (dashboard,) = resources(cfn, "AWS::CloudWatch::Dashboard").values()
    body = str(dashboard["Properties"]["DashboardBody"])
    for title in ("Pending now per kind", "Oldest pending per kind (s)", "Pending items per kind"):
        assert title in body, title
    assert "PendingItems" in body and "singleValue" in body


def _widgets(cfn: dict[str, Any]) -> list[dict[str, Any]]:
    """The dashboard's widgets, its body's tokens (the region, the alarms' ARNs) read as "X"."""
    (dashboard,) = resources(cfn, "AWS::CloudWatch::Dashboard").values()
    body = dashboard["Properties"]["DashboardBody"]
    parts = body["Fn::Join"][1] if isinstance(body, dict) else [body]
    widgets: list[dict[str, Any]] = json.loads("".join(p if isinstance(p, str) else "X" for p in parts))["widgets"]
    return widgets


def _metrics(widget: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(metric, kind, statistic) of each metric a widget shows."""
    found = set()
    for metric in widget["properties"]["metrics"]:
        names, options = metric[:-1], metric[-1]
        dims = dict(zip(names[2::2], names[3::2], strict=True))
        found.add((names[1], dims.get("kind", ""), options.get("stat", "")))
    return found


def test_dashboard_shows_answer_times_and_deadlines_per_kind_over_a_day_and_a_week(cfn: dict[str, Any]) -> None:
    """The Waits page's answer figures per kind (tool approvals too): p50/p95 of the answer time and the
    deadlines met and missed, each widget over its own window (the last day, the last week)."""
    widgets = {w["properties"].get("title"): w for w in _widgets(cfn)}
    for window, start in (("day", "-P1D"), ("week", "-P7D")):
        times = widgets[f"Answer time per kind, last {window} (s)"]
        deadlines = widgets[f"Deadlines met and missed per kind, last {window}"]
        for widget in (times, deadlines):
            assert widget["properties"]["start"] == start and widget["properties"]["setPeriodToTimeRange"] is True
        assert _metrics(times) == {("AnswerTimeSeconds", k, s) for k in PENDING_KINDS for s in ("p50", "p95")}
        assert _metrics(deadlines) == {
            (name, k, "Sum") for k in PENDING_KINDS for name in ("DeadlinesMet", "DeadlinesMissed")
        }
    pending_now = widgets["Pending now per kind"]
    assert {kind for _, kind, _ in _metrics(pending_now)} == set(PENDING_KINDS)


def test_every_function_logs_its_answer_metrics_in_the_dashboards_namespace(cfn: dict[str, Any]) -> None:
    """An answer's metric is the log line of whichever function wrote it (the API, the Slack worker, a
    gate's deadline, the reconciler): each Baton function sets the namespace the dashboard reads, and no
    role is granted cloudwatch:PutMetricData (EMF needs none)."""
    writers = set()
    for function in resources(cfn, "AWS::Lambda::Function").values():
        props = function["Properties"]
        variables = props.get("Environment", {}).get("Variables", {})
        if "BATON_TABLE_NAME" in variables:
            assert variables["POWERTOOLS_METRICS_NAMESPACE"] == f"Baton/{TEAM}", props.get("FunctionName")
            writers.add(props.get("FunctionName"))
    assert {f"{PREFIX}-api", f"{PREFIX}-reconcile", f"{PREFIX}-gate_deadline"} <= writers, writers
    assert "cloudwatch:PutMetricData" not in json.dumps(resources(cfn, "AWS::IAM::Policy"))


def test_thresholds_are_checked() -> None:
    with pytest.raises(ValueError, match="at least 1 minute"):
        TeamConfig(team="x", pending_age_alarm_minutes_by_kind={"review": 0})
    assert TeamConfig(team="x", pending_age_alarm_minutes=30).pending_age_alarm_seconds("ask") == 1800
