"""Typed configuration, read once per cold start from the function's environment."""

from __future__ import annotations

import base64
import json
import os
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, field_validator

if TYPE_CHECKING:
    from collections.abc import Mapping


class MissingResourceError(RuntimeError):
    """A resource every Baton Lambda needs is not configured: raised at cold start, naming the variable."""


# A settings value holding deflated, base64'd JSON starts with this (baton.workflows.input_schema.compact).
COMPRESSED_PREFIX = "zlib64:"

# The resources a wiring cannot run without, and what each is (for the error that names it).
REQUIRED_RESOURCES = {"table_name": "the DynamoDB table", "topic_arn": "the notifications SNS topic"}


class Settings(BaseModel):
    """Environment of every Baton Lambda (the CDK stack and the local stack set the same names)."""

    table_name: str = Field(alias="BATON_TABLE_NAME")
    topic_arn: str = Field(default="", alias="BATON_TOPIC_ARN")
    # workflow name -> state machine ARN, as JSON; hosted runs can start only these.
    workflows: dict[str, str] = Field(default_factory=dict, alias="BATON_WORKFLOWS")
    api_url: str = Field(default="", alias="BATON_API_URL")
    # Set only by the local stack: the bearer token that stands in for IAM/Cognito there.
    local_api_token: str = Field(default="", alias="BATON_LOCAL_API_TOKEN")
    # Deployed: IAM principals whose ARN matches this regex are agents (ask/drain/await/interrupt),
    # everyone else is an operator. Empty: every IAM caller is an operator.
    agent_principal_pattern: str = Field(default="", alias="BATON_AGENT_PRINCIPAL_PATTERN")
    # Deployed: the agent role (infra/capabilities/api.py); its sessions are agents, each for the run its
    # session name gives (baton/api/auth.py).
    agent_role_name: str = Field(default="", alias="BATON_AGENT_ROLE_NAME")
    event_ttl_days: int = Field(default=90, alias="BATON_EVENT_TTL_DAYS")
    # Review gate: which companion answers (offline | bedrock) and how the merge runs (codebuild | local).
    companion: str = Field(default="bedrock", alias="BATON_COMPANION")
    companion_model: str = Field(default="", alias="BATON_COMPANION_MODEL")
    merge_runner: str = Field(default="codebuild", alias="BATON_MERGE_RUNNER")
    merge_project: str = Field(default="", alias="BATON_MERGE_PROJECT")
    # The repository merges land in (the CDK stack's `-c repository=`); empty = none deployed.
    merge_repository: str = Field(default="", alias="BATON_MERGE_REPOSITORY")
    # Deployed: each workflow's input schema (statemachines/*.input.schema.json as compact JSON, deflated and
    # base64'd after COMPRESSED_PREFIX to fit Lambda's 4 KB environment; set on the API function by
    # infra/stack.py); empty = read them from the checkout (baton dev, tests).
    input_schemas: dict[str, dict[str, object]] = Field(default_factory=dict, alias="BATON_INPUT_SCHEMAS")
    # Local stack: the named local operators' groups for quorum approvers, as JSON {"group": ["alice", ...]}
    # (deployed, groups come from the caller's Cognito groups; baton/api/auth.py).
    local_groups: dict[str, list[str]] = Field(default_factory=dict, alias="BATON_LOCAL_GROUPS")
    # The notify channels the stack wires (comma-separated; infra/stack.py and the local stack set it);
    # empty = not said, every channel Baton knows is accepted (baton/domain/channels.py).
    notify_channels: tuple[str, ...] = Field(default=(), alias="BATON_NOTIFY_CHANNELS")
    # Deployed: the web origins besides the API's own whose pages may call the API and /mcp (comma-separated;
    # the CDK context `allowed_origins`); baton/domain/origins.py.
    allowed_origins: tuple[str, ...] = Field(default=(), alias="BATON_ALLOWED_ORIGINS")
    # The policy in force (issue 31; baton/policy/sources.py): deployed, the SSM parameter holding it (the
    # CDK context `policy`), re-read at most every policy_ttl_seconds; locally, a file (`baton dev --policy`).
    # Neither: no policy, every call goes to a person. The parameter wins when both are set.
    policy_parameter: str = Field(default="", alias="BATON_POLICY_PARAMETER")
    policy_file: str = Field(default="", alias="BATON_POLICY_FILE")
    # baton.contracts.policy.PolicyMode, spelled here: importing the contracts package costs every cold start.
    policy_mode: Literal["shadow", "enforce"] = Field(default="enforce", alias="BATON_POLICY_MODE")
    policy_ttl_seconds: float = Field(default=30.0, ge=0, alias="BATON_POLICY_TTL_SECONDS")

    # Web Push (baton/channels/push/): the VAPID private key (PEM), deployed a Secrets Manager secret
    # (infra/capabilities/notifications.py), locally a file `baton dev` makes (.baton/vapid.pem). Neither: push off.
    vapid_secret_id: str = Field(default="", alias="BATON_VAPID_SECRET_ID")
    vapid_key_file: str = Field(default="", alias="BATON_VAPID_KEY_FILE")
    vapid_subject: str = Field(default="mailto:baton@localhost", alias="BATON_VAPID_SUBJECT")
    # Passkeys (baton/services/passkeys.py): the WebAuthn relying party id, the inbox's host (deployed, the CDK
    # context webauthn_rp_id); the page origins allowed to use them (comma-separated; empty: https://<rp id>).
    # No rp id: passkeys off, and no approval asks for one.
    webauthn_rp_id: str = Field(default="", alias="BATON_WEBAUTHN_RP_ID")
    webauthn_origins: tuple[str, ...] = Field(default=(), alias="BATON_WEBAUTHN_ORIGINS")

    model_config = {"populate_by_name": True, "frozen": True}

    @field_validator("workflows", "input_schemas", "local_groups", mode="before")
    @classmethod
    def _parse_workflows(cls, value: object) -> object:
        if isinstance(value, str) and value.startswith(COMPRESSED_PREFIX):
            value = zlib.decompress(base64.b64decode(value.removeprefix(COMPRESSED_PREFIX))).decode()
        if isinstance(value, str):
            return json.loads(value) if value.strip() else {}
        return value

    @field_validator("notify_channels", mode="before")
    @classmethod
    def _parse_channels(cls, value: object) -> object:
        from baton.domain.channels import parse_channels

        return parse_channels(value)

    @field_validator("allowed_origins", "webauthn_origins", mode="before")
    @classmethod
    def _parse_origins(cls, value: object) -> object:
        from baton.domain.origins import parse_origins

        return parse_origins(value)

    def require_resources(self) -> None:
        """Fail loudly when a required resource is missing (the CDK stack and the local stack set both)."""
        for name, what in REQUIRED_RESOURCES.items():
            if not getattr(self, name):
                variable = type(self).model_fields[name].alias
                raise MissingResourceError(f"{variable} is not set: this function needs {what}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        known = {f.alias for f in cls.model_fields.values() if f.alias}
        return cls.model_validate({k: v for k, v in env.items() if k in known})


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process (one cold start = one read)."""
    return Settings.from_env()
