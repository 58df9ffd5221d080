"""Every deployment option synthesizes with cdk-nag on (tests/synth/options.py): each context key alone and
the realistic combinations, so no `cdk deploy -c key=value` a team may run fails at synth on an
unacknowledged finding. `make test` hands these tests out one by one (tests/conftest.py, PER_TEST): they
spread over the workers, each worker's jsii kernel shared by the synths it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.synth.options import (
    ALONE,
    MATRIX,
    NOT_AN_OPTION,
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
    assert set(ALONE) | set(NOT_AN_OPTION) >= read | documented, "a key with no case of its own (ALONE)"


@pytest.mark.parametrize("case", MATRIX, ids=[case.name for case in MATRIX])
def test_the_option_synthesizes_with_cdk_nag_on(case: Case, tmp_path: Path) -> None:
    synthesized = synthesize_case(case, tmp_path / "cdk.out")
    assert synthesized.template.is_file()
    # A key the app read at synth (under whatever name) that has no case fails here too.
    assert synthesized.keys_read - covered_keys() == set()


def test_an_unacknowledged_finding_fails_the_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases' synth is the deployed one's as far as cdk-nag goes (skipping bundling hides no finding):
    with the Slack app's acknowledgements gone, its worker-invoke wildcard (AwsSolutions-IAM5) fails it."""
    from infra.capabilities.slack import SlackApp

    monkeypatch.setattr(SlackApp, "_acknowledge", lambda *_: None)
    with pytest.raises(RuntimeError, match=r"Validation ?[Ff]ailed") as failure:
        synthesize_case(Case("slack_channel", ALONE["slack_channel"]), tmp_path / "cdk.out")
    assert "AwsSolutions-IAM5" in str(failure.value)
