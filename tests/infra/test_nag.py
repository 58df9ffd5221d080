"""cdk-nag AwsSolutions: zero unacknowledged findings; every acknowledgement has its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.infra


def test_no_unacknowledged_awssolutions_findings(synthesized: Any) -> None:
    from infra.nag import findings

    found = findings(synthesized.stack)
    assert not found, "unacknowledged cdk-nag findings:\n" + "\n".join(str(f) for f in found)


def test_every_acknowledgement_names_a_rule_and_a_reason(synthesized: Any) -> None:
    from infra.nag import acknowledgements

    acks = list(acknowledgements(synthesized.stack))
    assert acks
    for ack in acks:
        assert ack.rule.startswith("AwsSolutions-"), ack
        assert len(ack.reason) >= 40, ack
    # Never acknowledged wholesale: each one sits on a construct below the stack.
    assert all(ack.path != synthesized.stack.node.path for ack in acks)


def test_the_plugin_fails_synth_on_a_finding(tmp_path: Path) -> None:
    """The app registers AwsSolutions through CDK's validation API, so `cdk synth` itself fails."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_sns as sns

    from infra.nag import add_checks

    app = App(outdir=str(tmp_path))
    sns.Topic(Stack(app, "Probe"), "Unencrypted")
    add_checks(app)
    with pytest.raises(RuntimeError, match=r"Validation ?[Ff]ailed") as failure:
        app.synth()
    assert "AwsSolutions-SNS3" in str(failure.value)
