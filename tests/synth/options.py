"""Every deployment option, as the synth cases of tests/synth/: each CDK context key alone, and the realistic
combinations. The keys come from what infra/ reads (`ctx("...")`, `try_get_context("...")`) and from
infra/README.md's settings tables, so a new key without a case here fails tests/synth/test_deployment_options.py.

Each case synthesizes with cdk-nag on (infra/nag.py: an unacknowledged finding fails the synth), as
`cdk deploy -c key=value` would, with one difference: asset bundling is skipped (CDK's own
`aws:cdk:bundling-stacks` context, what `cdk deploy --exclusively` sets for the other stacks). Bundling
compiles each function's code (infra/assets.py), a third of a synth's time, and no cdk-nag rule or checkov
check reads an asset's bytes; the bundled assets are tested by tests/infra/ (test_asset_bytecode.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.config import RETIRED_KEYS

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
SKIP_BUNDLING: Mapping[str, list[str]] = {"aws:cdk:bundling-stacks": []}
# `ctx("key")` (infra/config.py's reader) and `node.try_get_context("key")` / `get_context("key")` elsewhere.
CONTEXT_READ = re.compile(r"""(?:\btry_get_context|\bget_context|\bctx)\(\s*["']([A-Za-z0-9_:.@/-]+)["']""")
# The first cell of a row of the settings tables (`| key | default | meaning |`, `| setting | ... |`).
SETTINGS_HEADER = re.compile(r"^\| (key|setting) \| default \| meaning \|$")
SETTINGS_KEY = re.compile(r"`([a-z_]+)`")

# Keys that are not a deployment option: `nag=false` turns the very check off (never for deployments).
NOT_AN_OPTION = {"nag": "turns cdk-nag off (infra/README.md: not for deployments); every case runs with it on"}
# Retired keys are refused at synth, with their reason (test_a_retired_key_is_refused_with_its_reason).
RETIRED: Mapping[str, str] = RETIRED_KEYS

TEAM_20 = "platform-agents-prod"  # the longest team name TEAM_PATTERN allows: every resource name is longest
assert len(TEAM_20) == 20
CODECOMMIT = "https://git-codecommit.eu-west-1.amazonaws.com/v1/repos/agent-work"
ACCOUNT = "123456789012"
SECRET_ARN = f"arn:aws:secretsmanager:eu-west-1:{ACCOUNT}:secret:{{name}}-AbCdEf"
POLICY = str(ROOT / "examples" / "policy" / "tools.cedar")  # a Cedar policy that loads (baton.policy.engine)

# Each key alone, with a realistic value (as `-c key=value` passes it: a string). A key that does nothing
# without another one brings that one along (the audit settings need the bucket; slack_app_secret and
# slack_operators_parameter are read by the Slack app, which is always deployed).
ALONE: Mapping[str, Mapping[str, str]] = {
    "team": {"team": TEAM_20},
    "emails": {"emails": "ops@example.com,lead@example.com"},
    "alarm_emails": {"alarm_emails": "oncall@example.com"},
    "email_sender": {"email_sender": "baton@example.com"},
    "slack_parameter": {"slack_parameter": "/shared/slack/webhook-url"},
    "slack_secret_arn": {"slack_secret_arn": SECRET_ARN.format(name="shared/slack-webhook")},
    "webhook_url": {"webhook_url": "https://hooks.example.com/baton"},
    "webhook_secret_parameter": {"webhook_secret_parameter": "/shared/webhook-secret"},
    "repository": {"repository": CODECOMMIT},
    "repository_token_secret": {"repository_token_secret": "baton/dev/repo-token"},
    "agent_principal_pattern": {"agent_principal_pattern": ":assumed-role/alpha-agent-"},
    "agent_launchers": {"agent_launchers": f"arn:aws:iam::{ACCOUNT}:role/agent-launcher"},
    "throttle_rate": {"throttle_rate": "10"},
    "throttle_burst": {"throttle_burst": "20"},
    "allowed_origins": {"allowed_origins": "https://tools.example.com,https://ops.example.com:8443"},
    "api_account_role": {"api_account_role": "false"},
    "gate_timeout_alarm_threshold": {"gate_timeout_alarm_threshold": "3"},
    "parked_gate_alarm_hours": {"parked_gate_alarm_hours": "48"},
    "pending_age_alarm_minutes": {"pending_age_alarm_minutes": "60"},
    "pending_age_alarm_minutes_by_kind": {"pending_age_alarm_minutes_by_kind": '{"review": 480, "ask": 30}'},
    "pending_count_alarm_threshold": {"pending_count_alarm_threshold": "25"},
    "companion_model": {"companion_model": "us.anthropic.claude-sonnet-4-20250514-v1:0"},
    "audit_bucket": {"audit_bucket": "true"},
    "audit_retention_days": {"audit_bucket": "true", "audit_retention_days": "30"},
    "audit_lock_mode": {"audit_bucket": "true", "audit_lock_mode": "COMPLIANCE"},
    "slack_channel": {"slack_channel": "C0123ABC"},
    "slack_app_secret": {"slack_app_secret": SECRET_ARN.format(name="baton/dev/slack-app")},
    "slack_operators_parameter": {"slack_operators_parameter": "/shared/slack-operators"},
    "slack_provisioned_concurrency": {"slack_provisioned_concurrency": "2"},
    "policy": {"policy": POLICY},
    "policy_mode": {"policy": POLICY, "policy_mode": "shadow"},
    "webauthn_rp_id": {"webauthn_rp_id": "inbox.example.com"},
}

# Everything on, a GitHub repository with a token secret by ARN: checkov's second template
# (tests/synth/test_checkov.py).
EVERYTHING_ON: Mapping[str, str] = {
    **{key: value for context in ALONE.values() for key, value in context.items()},
    "team": "ci",
    "repository": "https://github.com/example/agent-work.git",
    "repository_token_secret": SECRET_ARN.format(name="baton/ci/repo-token"),
    "slack_app_secret": "baton/ci/slack-app",
    "api_account_role": "true",
    "audit_lock_mode": "GOVERNANCE",
    "audit_retention_days": "365",
}


@dataclass(frozen=True)
class Case:
    name: str
    context: Mapping[str, Any] = field(default_factory=dict)

    @property
    def team(self) -> str:
        return str(self.context.get("team", "dev"))


DEFAULT = Case("default")
EVERYTHING = Case("everything-on", EVERYTHING_ON)
# The other way round on each choice everything-on makes: the longest team, a CodeCommit repository (the
# build role pushes; no token), no account-level API Gateway role, COMPLIANCE lock, the Slack signed-app
# with the webhook by SSM parameter.
EVERYTHING_ELSE = Case(
    "everything-on-20-char-team-codecommit-no-account-role-compliance",
    {
        **{k: v for k, v in EVERYTHING_ON.items() if k not in ("repository_token_secret", "slack_secret_arn")},
        "team": TEAM_20,
        "repository": CODECOMMIT,
        "api_account_role": "false",
        "audit_lock_mode": "COMPLIANCE",
        "slack_app_secret": SECRET_ARN.format(name=f"baton/{TEAM_20}/slack-app"),
    },
)
SLACK_APP = Case(
    "slack-channel-with-app-secret",
    {"slack_channel": "C0123ABC", "slack_app_secret": SECRET_ARN.format(name="baton/dev/slack-app")},
)
ALONE_CASES = [Case(key, context) for key, context in ALONE.items()]
# tests/synth/test_deployment_options.py synthesizes these (and SLACK_APP, whose grants it reads);
# test_checkov.py the other two (and scans them).
MATRIX = [*ALONE_CASES, EVERYTHING_ELSE]
CHECKOV_CASES = (DEFAULT, EVERYTHING)


def keys_read_by_infra() -> set[str]:
    """Every context key infra/ reads by name."""
    return {key for path in sorted(INFRA.rglob("*.py")) for key in CONTEXT_READ.findall(path.read_text())}


def keys_in_readme(readme: Path = INFRA / "README.md") -> set[str]:
    """The keys of infra/README.md's settings tables (first column)."""
    keys: set[str] = set()
    in_table = False
    for line in readme.read_text().splitlines():
        if SETTINGS_HEADER.match(line):
            in_table = True
        elif in_table and line.startswith("|"):
            keys.update(SETTINGS_KEY.findall(line.split("|")[1]))
        else:
            in_table = False
    return keys


def covered_keys() -> set[str]:
    cases = (*MATRIX, SLACK_APP, *CHECKOV_CASES)
    return {key for case in cases for key in case.context} | set(NOT_AN_OPTION) | set(RETIRED)


@contextmanager
def recording_context_reads() -> Iterator[set[str]]:
    """The context keys the app's Python code reads while it is built (a key read under a name no regex
    of keys_read_by_infra sees still shows up here)."""
    from constructs import Node

    read: set[str] = set()
    original = Node.try_get_context

    def recording(self: Node, key: str) -> Any:
        read.add(key)
        return original(self, key)

    Node.try_get_context = recording  # type: ignore[method-assign]
    try:
        yield read
    finally:
        Node.try_get_context = original  # type: ignore[method-assign]


@dataclass(frozen=True)
class Synthesized:
    template: Path
    keys_read: frozenset[str]


def synthesize_case(case: Case, outdir: Path) -> Synthesized:
    """`cdk synth` of the case with cdk-nag on: raises on an unacknowledged finding (infra/nag.py)."""
    from infra.synth import synthesize

    if "nag" in case.context:  # `nag=false` would turn the check off
        raise ValueError(f"case {case.name} sets nag: every case synthesizes with cdk-nag on")
    with recording_context_reads() as read:
        result = synthesize(case.team, outdir, context={**case.context, **SKIP_BUNDLING}, nag=True)
    return Synthesized(result.template_path, frozenset(read))
