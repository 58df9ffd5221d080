"""Every deployment option synthesizes with cdk-nag on (tests/synth/options.py): each context key alone and
the realistic combinations, so no `cdk deploy -c key=value` a team may run fails at synth on an
unacknowledged finding. `make test` hands these tests out one by one (tests/conftest.py, PER_TEST): they
spread over the workers, each worker's jsii kernel shared by the synths it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.synth.options import (
    ALONE,
    MATRIX,
    NOT_AN_OPTION,
    RETIRED,
    SLACK_APP,
    Case,
    covered_keys,
    keys_in_readme,
    keys_read_by_infra,
    synthesize_case,
)

pytestmark = pytest.mark.infra


def test_every_key_infra_reads_or_documents_has_a_case() -> None:
    read, documented = keys_read_by_infra(), keys_in_readme()
    # The readers' regex and the README parser still find the keys they are meant to.
    assert {"team", "slack_channel", "audit_lock_mode", "nag"} <= read
    assert {"team", "throttle_burst", "agent_launchers", "nag"} <= documented
    assert (read | documented) - covered_keys() == set(), "a context key with no synth case in options.py"
    assert set(ALONE) | set(NOT_AN_OPTION) | set(RETIRED) >= read | documented, "a key with no case of its own (ALONE)"
    assert read - documented == set(), "a key infra/ reads that infra/README.md's settings tables do not list"


@pytest.mark.parametrize("case", MATRIX, ids=[case.name for case in MATRIX])
def test_the_option_synthesizes_with_cdk_nag_on(case: Case, tmp_path: Path) -> None:
    synthesized = synthesize_case(case, tmp_path / "cdk.out")
    assert synthesized.template.is_file()
    # A key the app read at synth (under whatever name) that has no case fails here too.
    assert synthesized.keys_read - covered_keys() == set()


@pytest.mark.parametrize("key", sorted(RETIRED))
def test_a_retired_key_is_refused_with_its_reason(key: str, tmp_path: Path) -> None:
    """A retired key is no deployment option: `-c key=...` stops the synth, saying why and what replaces it."""
    with pytest.raises(ValueError, match=f"context key '{key}' is no longer supported") as refused:
        synthesize_case(Case(key, {key: "26"}), tmp_path / "cdk.out")
    assert RETIRED[key] in str(refused.value)


def test_an_unacknowledged_finding_fails_the_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases' synth is the deployed one's as far as cdk-nag goes (skipping bundling hides no finding):
    with the Slack app's acknowledgements gone, its worker-invoke wildcard (AwsSolutions-IAM5) fails it."""
    from infra.capabilities.slack import SlackApp

    monkeypatch.setattr(SlackApp, "_acknowledge", lambda *_: None)
    with pytest.raises(RuntimeError, match=r"Validation ?[Ff]ailed") as failure:
        synthesize_case(Case("slack_channel", ALONE["slack_channel"]), tmp_path / "cdk.out")
    assert "AwsSolutions-IAM5" in str(failure.value)


def test_notify_slack_posting_as_the_app_may_get_the_interaction_from_the_table_not_its_indexes(
    tmp_path: Path,
) -> None:
    """`-c slack_channel` (with the app's secret by ARN): notify_slack GetItem's the interaction it renders,
    on the table itself. `table.grant` also granted `<table>/index/*` (GetItem reads no index), an
    unacknowledged AwsSolutions-IAM5 that failed the synth."""
    synthesized = synthesize_case(SLACK_APP, tmp_path / "cdk.out")
    cfn: dict[str, Any] = json.loads(synthesized.template.read_text())
    (table,) = [k for k, v in cfn["Resources"].items() if v["Type"] == "AWS::DynamoDB::Table"]
    (policy,) = [
        v["Properties"]["PolicyDocument"]
        for k, v in cfn["Resources"].items()
        if v["Type"] == "AWS::IAM::Policy" and k.startswith("Functionsnotifyslack")
    ]
    granted = [s["Resource"] for s in policy["Statement"] if "dynamodb:GetItem" in s["Action"]]
    assert granted == [{"Fn::GetAtt": [table, "Arn"]}]
    secret_reads = [s["Resource"] for s in policy["Statement"] if s["Action"] == "secretsmanager:GetSecretValue"]
    assert SLACK_APP.context["slack_app_secret"] in secret_reads
