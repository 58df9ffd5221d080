"""Synthesize the CDK app ONCE per test session (the first synth takes ~15-25 s) and share it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

CFN_LINT_CONFIG = Path(__file__).resolve().parents[2] / "infra" / ".cfnlintrc.yaml"
# The policy the full synth ships (tests/infra/test_policy_infra.py).
POLICY_FILE = Path(__file__).resolve().parents[2] / "examples" / "policy" / "tools.cedar"
TEAM = "ci"
PREFIX = f"baton-{TEAM}"
CONTEXT: Mapping[str, Any] = {
    "emails": "ops@example.com,lead@example.com",
    "email_sender": "baton@example.com",
    "webhook_url": "https://hooks.example.com/baton",
    "repository": "https://git-codecommit.eu-west-1.amazonaws.com/v1/repos/agent-work",
    "companion_model": "us.anthropic.claude-sonnet-4-20250514-v1:0",
    "agent_principal_pattern": ":assumed-role/alpha-agent-",
    # pending-age alarms (tests/infra/test_pending_age_alarms.py): one kind's own threshold, a count alarm
    "pending_age_alarm_minutes_by_kind": '{"review": 480}',
    "pending_count_alarm_threshold": "25",
    # the web pages besides the API's own that may call it (tests/infra/test_origin_infra.py)
    "allowed_origins": "https://tools.example.com, HTTPS://Ops.Example.com/",
}


# Every optional part on: the audit archive's function, notify_slack posting as the Slack app (with the
# slack-sdk layer), the policy parameter. test_audit_infra.py, test_policy_infra.py and the import check
# (test_deployed_imports.py) share its synth.
FULL_CONTEXT: Mapping[str, Any] = {
    **CONTEXT,
    "audit_bucket": "true",
    "audit_retention_days": "400",
    "audit_lock_mode": "compliance",
    "slack_channel": "C0123ABCD",
    "policy": str(POLICY_FILE),
    "policy_mode": "shadow",
    # passkeys for risky approvals: the inbox's host (tests/infra/test_passkeys_infra.py)
    "webauthn_rp_id": "Inbox.Example.com",
}


@pytest.fixture(scope="session")
def synthesized_full(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from infra.synth import synthesize

    return synthesize(TEAM, tmp_path_factory.mktemp("cdk-full") / "cdk.out", context=FULL_CONTEXT, nag=False)


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Any:
    outdir = tmp_path_factory.mktemp("cdk") / "cdk.out"
    # nag=False here: test_nag.py lists the findings itself, so a failure names them all.
    result = synthesize_compiled(outdir)
    # cfn-lint takes ~10-30 s (mostly its start-up): run it in the background while the other tests
    # run; test_cfn_lint.py is moved to the end of the session and collects the result.
    _CFN_LINT.append(
        subprocess.Popen(
            [
                str(Path(sys.executable).parent / "cfn-lint"),
                "--config-file",
                str(CFN_LINT_CONFIG),
                "--",
                str(result.template_path),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    )
    return result


_CFN_LINT: list[subprocess.Popen[str]] = []


def synthesize_compiled(outdir: Path) -> Any:
    """The synth, with every code asset compiled as deployed (infra/assets.py). Where this machine has no
    Python of the runtime's version, this interpreter compiles them instead (its own cache tag), so the
    tests still see compiled assets (tests/infra/test_asset_bytecode.py); the real runtime's Python is
    used wherever one is found."""
    from infra import assets
    from infra.synth import synthesize

    found = assets.runtime_interpreter()
    if found is not None:
        return synthesize(TEAM, outdir, context=CONTEXT, nag=False)
    original = assets.runtime_interpreter
    assets.runtime_interpreter = lambda version=assets.RUNTIME_PYTHON: sys.executable  # type: ignore[assignment]
    try:
        return synthesize(TEAM, outdir, context=CONTEXT, nag=False)
    finally:
        assets.runtime_interpreter = original


@pytest.fixture(scope="session", autouse=True)
def _synthesize_first(synthesized: Any) -> None:
    """Synthesize before any infra test so the background cfn-lint overlaps all of them."""


@pytest.fixture(scope="session")
def cfn_lint_result(synthesized: Any) -> tuple[int, str]:
    """(exit code, output) of cfn-lint on the synthesized template."""
    proc = _CFN_LINT[0]
    output, _ = proc.communicate(timeout=180)
    return proc.returncode, output


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the cfn-lint test last, so the background lint overlaps the other infra tests."""
    items.sort(key=lambda item: item.path.name == "test_cfn_lint.py")


@pytest.fixture(scope="session")
def template_path(synthesized: Any) -> Path:
    path: Path = synthesized.template_path
    return path


@pytest.fixture(scope="session")
def cfn(template_path: Path) -> dict[str, Any]:
    """The synthesized template as plain JSON."""
    loaded: dict[str, Any] = json.loads(template_path.read_text())
    return loaded


@pytest.fixture(scope="session")
def template(cfn: dict[str, Any]) -> Any:
    """The same template as a CDK assertions `Template`."""
    from aws_cdk.assertions import Template

    return Template.from_json(cfn)


def resources(cfn: Mapping[str, Any], type_: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in cfn["Resources"].items() if v["Type"] == type_}
