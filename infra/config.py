"""A team environment's deployment settings, read from CDK context (`-c key=value` or cdk.json)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton.domain.origins import normalized_origin
from baton.policy.engine import Policy, PolicyError

if TYPE_CHECKING:
    from constructs import Node

POLICY_MODES = ("shadow", "enforce")
TEAM_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
# A WebAuthn relying party id: a host name (the inbox's), lower case, no scheme, port or path.
RP_ID_PATTERN = re.compile(r"[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*")
DEFAULT_TEAM = "dev"

# Context keys that no longer configure anything, and why: refused rather than silently ignored.
RETIRED_KEYS = {
    "powertools_layer_version": "the functions no longer use the AWS-managed Powertools layer: Powertools and "
    "pydantic ship in Baton's own runtime layer at uv.lock's versions (infra/runtime_layer.py); change them "
    "in uv.lock",
}


def _as_list(value: Any) -> list[str]:
    """`a@x,b@y`, a JSON list, or a list (cdk.json) -> ['a@x', 'b@y']."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value).strip()
    if text.startswith("["):
        return [str(v).strip() for v in json.loads(text) if str(v).strip()]
    return [part.strip() for part in text.split(",") if part.strip()]


def _as_bool(value: Any, default: bool) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _as_int(value: Any, default: int) -> int:
    return default if value is None or value == "" else int(value)


def _as_int_map(value: Any) -> dict[str, int]:
    """`{"review": 480}` (a JSON object, or a dict in cdk.json) -> {"review": 480}."""
    if value is None or value == "":
        return {}
    loaded = json.loads(value) if isinstance(value, str) else value
    if not isinstance(loaded, dict):
        raise ValueError(f"expected a JSON object of numbers, got {value!r}")
    return {str(k): int(v) for k, v in loaded.items()}


@dataclass(frozen=True)
class TeamConfig:
    """Everything that differs between team environments. Names of every resource derive from `team`."""

    team: str = DEFAULT_TEAM
    # People who get notifications on the `email` channel, and alarm emails.
    emails: list[str] = field(default_factory=list)
    alarm_emails: list[str] = field(default_factory=list)
    # The SES identity Baton's mail is sent from (a verified address). Set: each of `emails` gets their
    # own mail with a signed answer link (infra/capabilities/email_links.py); unset: the SNS email
    # subscription, with no links. Alarms always go by SNS email.
    email_sender: str = ""
    # Slack webhook URL: an SSM SecureString (default name below) or a Secrets Manager secret ARN.
    slack_parameter: str = ""
    slack_secret_arn: str = ""
    # Signed webhook channel (optional): the URL, and the SSM SecureString holding the signing secret.
    webhook_url: str = ""
    webhook_secret_parameter: str = ""
    # The git repository merges land in (https URL), and an optional Secrets Manager secret with a
    # token for pushing to it (CodeCommit URLs use the build role instead).
    repository: str = ""
    # IAM principals (ARN regex) that are agents, not operators: they ask, drain, await and create
    # interrupts, but cannot answer, resume, claim or cancel. Empty: every IAM caller is an operator.
    agent_principal_pattern: str = ""
    # Who may start agent sessions (assume `<prefix>-agent` with RoleSessionName=run-<run_id>): IAM ARNs.
    # Empty: principals of this account whose own policies allow sts:AssumeRole on the agent role.
    agent_launchers: list[str] = field(default_factory=list)
    repository_token_secret: str = ""
    # API Gateway stage throttling (requests per second / burst) for each API.
    throttle_rate: int = 50
    throttle_burst: int = 100
    # Create the account-level API Gateway CloudWatch role (needed once per account and region for
    # access and execution logs); set false when another stack already manages it.
    api_account_role: bool = True
    # Alarm when a gate has waited its whole timeout this many times in 5 minutes.
    gate_timeout_alarm_threshold: int = 1
    # Alarm when the oldest parked gate has waited longer than this many hours (while it still waits).
    parked_gate_alarm_hours: int = 24
    # Alarm when the oldest pending item of a kind of pause (question, ask, await, interrupt, review,
    # tool_approval) has waited longer than this many minutes; `pending_age_alarm_minutes_by_kind`
    # overrides it per kind (context: a JSON object, e.g. {"review": 480}).
    pending_age_alarm_minutes: int = 240
    pending_age_alarm_minutes_by_kind: dict[str, int] = field(default_factory=dict)
    # Alarm when more than this many items of one kind are pending at once; 0: no count alarm.
    pending_count_alarm_threshold: int = 0
    # Review companion: a Bedrock model id (or inference profile id) turns on the Bedrock companion;
    # without one the review gate uses the offline companion.
    companion_model: str = ""
    # The decision log streamed to an S3 bucket with Object Lock (infra/capabilities/audit.py): off by
    # default; each record kept `audit_retention_days`, in GOVERNANCE or COMPLIANCE mode.
    audit_bucket: bool = False
    audit_retention_days: int = 365
    audit_lock_mode: str = "GOVERNANCE"
    # Web origins (https://host[:port]) besides the API's own whose pages may call the API and /mcp; a
    # request with any other `Origin` is a 403 (baton/domain/origins.py). Empty: only the API's own.
    allowed_origins: list[str] = field(default_factory=list)
    # A Cedar policy file (issue 31) shipped as the SSM parameter `policy_parameter_name`, which the
    # functions that decide re-read (infra/capabilities/policy.py); checked here, so a policy that does not
    # load never reaches a stack. `policy_mode`: enforce (the decision stands) or shadow (logged only).
    policy: str = ""
    policy_mode: str = "enforce"
    # Passkeys (baton/services/passkeys.py): the WebAuthn relying party id, the host operators open the inbox
    # at (the distribution's domain name, or a custom domain's); pages at https://<it> may use them. Empty:
    # off, and no approval asks for one. Context, not the distribution's attribute: the API function would
    # then reference the distribution that fronts the API (a cycle).
    webauthn_rp_id: str = ""

    def __post_init__(self) -> None:
        if self.policy_mode not in POLICY_MODES:
            raise ValueError(f"policy_mode {self.policy_mode!r} must be shadow or enforce")
        if self.policy:
            self.policy_text()  # ValueError listing the problems of a policy that does not load
        if not TEAM_PATTERN.match(self.team):
            raise ValueError(f"team {self.team!r} must match {TEAM_PATTERN.pattern} (it prefixes every resource name)")
        if self.parked_gate_alarm_hours < 1:
            raise ValueError("parked_gate_alarm_hours must be at least 1")
        if self.pending_age_alarm_minutes < 1 or any(v < 1 for v in self.pending_age_alarm_minutes_by_kind.values()):
            raise ValueError("pending-age alarm thresholds must be at least 1 minute")
        if self.pending_count_alarm_threshold < 0:
            raise ValueError("pending_count_alarm_threshold must be 0 (off) or more")
        if self.audit_lock_mode not in ("GOVERNANCE", "COMPLIANCE"):
            raise ValueError(f"audit_lock_mode {self.audit_lock_mode!r} must be GOVERNANCE or COMPLIANCE")
        if not 1 <= self.audit_retention_days <= 36500:
            raise ValueError("audit_retention_days must be 1..36500")
        for origin in self.allowed_origins:
            normalized_origin(origin)  # ValueError naming one that is not scheme://host[:port]
        if self.webauthn_rp_id and not RP_ID_PATTERN.fullmatch(self.webauthn_rp_id):
            raise ValueError(f"webauthn_rp_id {self.webauthn_rp_id!r} must be a host name (no scheme, port or path)")

    def pending_age_alarm_seconds(self, kind: str) -> int:
        return 60 * self.pending_age_alarm_minutes_by_kind.get(kind, self.pending_age_alarm_minutes)

    def policy_text(self) -> str:
        """The text of the `policy` file, once `Policy.load` takes it (a ValueError lists what it refused)."""
        try:
            text = Path(self.policy).read_text(encoding="utf-8")
        except OSError as err:
            raise ValueError(f"policy {self.policy!r} cannot be read: {err}") from err
        try:
            Policy.load(text)
        except PolicyError as err:
            problems = "".join(f"\n  - {p}" for p in err.problems)
            raise ValueError(f"policy {self.policy!r} does not load, so it is not deployed:{problems}") from err
        return text

    @property
    def policy_parameter_name(self) -> str:
        return f"/baton/{self.team}/policy"

    @property
    def prefix(self) -> str:
        return f"baton-{self.team}"

    @property
    def stack_name(self) -> str:
        return f"Baton-{self.team}"

    @property
    def companion(self) -> str:
        return "bedrock" if self.companion_model else "offline"

    @property
    def slack_parameter_name(self) -> str:
        return self.slack_parameter or f"/baton/{self.team}/slack-webhook-url"

    @property
    def webhook_secret_parameter_name(self) -> str:
        return self.webhook_secret_parameter or f"/baton/{self.team}/webhook-secret"

    @classmethod
    def from_node(cls, node: Node, team: str | None = None) -> TeamConfig:
        def ctx(key: str) -> Any:
            return node.try_get_context(key)

        for key, why in RETIRED_KEYS.items():
            if ctx(key) not in (None, ""):
                raise ValueError(f"context key {key!r} is no longer supported: {why}")
        emails = _as_list(ctx("emails"))
        return cls(
            team=str(team or ctx("team") or DEFAULT_TEAM),
            emails=emails,
            alarm_emails=_as_list(ctx("alarm_emails")) or emails,
            email_sender=str(ctx("email_sender") or ""),
            slack_parameter=str(ctx("slack_parameter") or ""),
            slack_secret_arn=str(ctx("slack_secret_arn") or ""),
            webhook_url=str(ctx("webhook_url") or ""),
            webhook_secret_parameter=str(ctx("webhook_secret_parameter") or ""),
            repository=str(ctx("repository") or ""),
            agent_principal_pattern=str(ctx("agent_principal_pattern") or ""),
            agent_launchers=_as_list(ctx("agent_launchers")),
            repository_token_secret=str(ctx("repository_token_secret") or ""),
            throttle_rate=_as_int(ctx("throttle_rate"), 50),
            throttle_burst=_as_int(ctx("throttle_burst"), 100),
            api_account_role=_as_bool(ctx("api_account_role"), True),
            gate_timeout_alarm_threshold=_as_int(ctx("gate_timeout_alarm_threshold"), 1),
            parked_gate_alarm_hours=_as_int(ctx("parked_gate_alarm_hours"), 24),
            pending_age_alarm_minutes=_as_int(ctx("pending_age_alarm_minutes"), 240),
            pending_age_alarm_minutes_by_kind=_as_int_map(ctx("pending_age_alarm_minutes_by_kind")),
            pending_count_alarm_threshold=_as_int(ctx("pending_count_alarm_threshold"), 0),
            companion_model=str(ctx("companion_model") or ""),
            audit_bucket=_as_bool(ctx("audit_bucket"), False),
            audit_retention_days=_as_int(ctx("audit_retention_days"), 365),
            audit_lock_mode=str(ctx("audit_lock_mode") or "GOVERNANCE").upper(),
            allowed_origins=[normalized_origin(o) for o in _as_list(ctx("allowed_origins"))],
            policy=str(ctx("policy") or ""),
            policy_mode=str(ctx("policy_mode") or "enforce").lower(),
            webauthn_rp_id=str(ctx("webauthn_rp_id") or "").lower(),
        )
