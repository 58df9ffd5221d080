"""`baton dev --policy FILE`: a policy that does not load is refused at start, in words, with its problems;
one that loads is handed to the handlers (BATON_POLICY_FILE, BATON_POLICY_MODE)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from baton.cli.dev import _policy_env
from baton.cli.main import app

GOOD = '@id("allow-read") permit(principal, action == Action::"call_tool", resource in Tool::"Read");'
BAD = 'permit(principal, action, resource);\n@id("q") @quorum("2") permit(principal, action, resource);'


def test_baton_dev_refuses_a_policy_that_does_not_load_listing_its_problems(tmp_path: Path) -> None:
    policy = tmp_path / "bad.cedar"
    policy.write_text(BAD)
    result = CliRunner().invoke(app, ["dev", "--policy", str(policy), "--state-dir", str(tmp_path / "state")])
    assert result.exit_code == 1
    said = " ".join(result.output.split())  # the console wraps at its width
    assert "does not load, so nothing started" in said
    assert "every rule needs an @id" in said and "rule q: @approvers, @quorum and @timeout need @ask" in said
    assert not (tmp_path / "state").exists()  # refused before the stack was built


def test_a_missing_policy_file_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["dev", "--policy", str(tmp_path / "nope.cedar")])
    assert result.exit_code == 1 and "cannot read the policy" in " ".join(result.output.split())


def test_a_policy_that_loads_is_named_to_the_handlers(tmp_path: Path) -> None:
    policy = tmp_path / "good.cedar"
    policy.write_text(GOOD)
    env = _policy_env(policy, "shadow")
    assert env == {"BATON_POLICY_FILE": str(policy.resolve()), "BATON_POLICY_MODE": "shadow"}
    assert _policy_env(None, "enforce") == {}


def test_an_unknown_policy_mode_is_refused() -> None:
    with pytest.raises(typer.BadParameter, match="shadow or enforce"):
        _policy_env(None, "log")
