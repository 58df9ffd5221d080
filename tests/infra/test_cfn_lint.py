"""cfn-lint on the synthesized template: no errors, no warnings beyond those ignored (with reasons)
in infra/.cfnlintrc.yaml. The lint itself runs in the background (see conftest.py)."""

from __future__ import annotations

import pytest

from tests.infra.conftest import CFN_LINT_CONFIG

pytestmark = pytest.mark.infra


def test_cfn_lint_is_clean(cfn_lint_result: tuple[int, str]) -> None:
    code, output = cfn_lint_result
    assert code == 0, output


def test_every_ignored_check_is_justified() -> None:
    lines = CFN_LINT_CONFIG.read_text().splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("- "):
            assert lines[i - 1].strip().startswith("#"), f"ignored check {stripped} has no reason above it"
