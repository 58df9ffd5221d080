"""The agent role: one session per run (the trust policy requires RoleSessionName run-*), allowed to call
the machines' API, and only the API Lambda is told its name (baton/api/auth.py reads the run from it)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra


def _agent_role(cfn: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    found = [
        (k, v)
        for k, v in resources(cfn, "AWS::IAM::Role").items()
        if v["Properties"].get("RoleName") == f"{PREFIX}-agent"
    ]
    assert len(found) == 1
    return found[0]


def test_agent_sessions_must_be_named_for_a_run(cfn: dict[str, Any]) -> None:
    _, role = _agent_role(cfn)
    statements = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statements and all(s["Action"] == "sts:AssumeRole" for s in statements)
    assert all(s["Condition"] == {"StringLike": {"sts:RoleSessionName": "run-*"}} for s in statements)


def test_the_agent_role_may_call_the_machines_api_only(cfn: dict[str, Any]) -> None:
    logical_id, _ = _agent_role(cfn)
    policies = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in resources(cfn, "AWS::IAM::Policy").values()
        if {"Ref": logical_id} in p["Properties"]["Roles"]
    ]
    statements = [s for doc in policies for s in doc]
    assert [s["Action"] for s in statements] == ["execute-api:Invoke"]
    assert "/live/*/api/*" in json.dumps(statements[0]["Resource"])
    assert "/live/*/mcp" in json.dumps(statements[0]["Resource"])  # and the MCP route


def test_only_the_api_knows_the_agent_role(cfn: dict[str, Any]) -> None:
    env = {
        v["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): v["Properties"]["Environment"]["Variables"]
        for v in resources(cfn, "AWS::Lambda::Function").values()
    }
    assert "BATON_AGENT_ROLE_NAME" in env["api"]
    assert "BATON_AGENT_ROLE_NAME" in env["mcp"]  # the MCP server resolves callers as the API does
    assert all("BATON_AGENT_ROLE_NAME" not in e for name, e in env.items() if name not in ("api", "mcp"))
