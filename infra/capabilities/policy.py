"""policy: the Cedar policy (issue 31) shipped with the stack as an SSM String parameter, which the functions
that decide tool approvals re-read (baton/policy/sources.py `ParameterPolicy`: at most every 30 s, a new
Version taken only if it loads). Each reader is told the parameter's name and the mode, and may call exactly
`ssm:GetParameter` on it. A new policy is a new deploy (`-c policy=FILE`) or a `put-parameter` of the same
name: the functions take it on their next read, and keep the last good one when it does not load."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import aws_iam as iam
from aws_cdk import aws_ssm as ssm
from constructs import Construct

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_cdk import aws_lambda as lambda_

    from infra.config import TeamConfig

# The functions that decide a call by policy: the API (tool approvals, `baton hook`) and the MCP server
# (its request_tool_approval tool).
POLICY_READERS = ("api", "mcp")
# SSM's standard tier holds 4 KB; a larger policy takes the advanced tier (up to 8 KB).
STANDARD_TIER_BYTES = 4096


class PolicyParameter(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: TeamConfig, functions: Mapping[str, lambda_.Function]
    ) -> None:
        super().__init__(scope, construct_id)
        text = config.policy_text()
        large = len(text.encode()) > STANDARD_TIER_BYTES
        self.parameter = ssm.StringParameter(
            self,
            "Parameter",
            parameter_name=config.policy_parameter_name,
            description=f"{config.prefix}: the Cedar policy deciding tool calls (allow, deny or ask a person)",
            string_value=text,
            tier=ssm.ParameterTier.ADVANCED if large else ssm.ParameterTier.STANDARD,
        )
        read = iam.PolicyStatement(actions=["ssm:GetParameter"], resources=[self.parameter.parameter_arn])
        for name in POLICY_READERS:
            function = functions[name]
            function.add_environment("BATON_POLICY_PARAMETER", config.policy_parameter_name)
            function.add_environment("BATON_POLICY_MODE", config.policy_mode)
            function.add_to_role_policy(read)
