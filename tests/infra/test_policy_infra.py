"""The policy shipped with the stack (issue 31 item 4; infra/capabilities/policy.py): `-c policy=FILE` makes
an SSM String parameter of the file's text, which the API and MCP functions are told (name and mode) and may
read with exactly `ssm:GetParameter`; without the option there is none; a policy that does not load fails
the synth with its problems, before anything is built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_

from infra.capabilities.policy import POLICY_READERS, PolicyParameter
from infra.config import TeamConfig
from tests.infra.conftest import POLICY_FILE, PREFIX, resources

pytestmark = pytest.mark.infra

NAME = "/baton/ci/policy"


def _env(cfn: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {
        f["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): f["Properties"]
        .get("Environment", {})
        .get("Variables", {})
        for f in resources(cfn, "AWS::Lambda::Function").values()
        if isinstance(f["Properties"].get("FunctionName"), str)
    }


def _readers(cfn: dict[str, Any]) -> dict[str, list[Any]]:
    """Function name -> the resources of every statement of its role that allows ssm:GetParameter."""
    role_of = {
        f["Properties"]["Role"]["Fn::GetAtt"][0]: f["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-")
        for f in resources(cfn, "AWS::Lambda::Function").values()
        if isinstance(f["Properties"].get("FunctionName"), str) and "Fn::GetAtt" in f["Properties"]["Role"]
    }
    found: dict[str, list[Any]] = {}
    for policy in resources(cfn, "AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if "ssm:GetParameter" in ([statement["Action"]] if isinstance(statement["Action"], str) else []):
                for role in policy["Properties"]["Roles"]:
                    name = role_of.get(role.get("Ref", ""))
                    if name:
                        found.setdefault(name, []).append(statement["Resource"])
    return found


def test_the_policy_ships_as_a_parameter_only_the_deciders_read(synthesized_full: Any) -> None:
    cfn = json.loads(synthesized_full.template_path.read_text())
    (logical, parameter), *others = [
        (k, v) for k, v in resources(cfn, "AWS::SSM::Parameter").items() if v["Properties"]["Name"] == NAME
    ]
    assert not others
    assert parameter["Properties"]["Type"] == "String" and parameter["Properties"]["Tier"] == "Standard"
    assert parameter["Properties"]["Value"] == POLICY_FILE.read_text()
    told = {
        name: (v["BATON_POLICY_PARAMETER"], v["BATON_POLICY_MODE"])
        for name, v in _env(cfn).items()
        if "BATON_POLICY_PARAMETER" in v
    }
    assert told == {name: (NAME, "shadow") for name in POLICY_READERS}
    readers = {name: arns for name, arns in _readers(cfn).items() if any(logical in json.dumps(a) for a in arns)}
    assert set(readers) == set(POLICY_READERS)
    for arns in readers.values():  # exactly this parameter's ARN, no wildcard
        (arn,) = [a for a in arns if logical in json.dumps(a)]
        assert "*" not in json.dumps(arn)


def test_without_the_option_there_is_no_policy(cfn: dict[str, Any]) -> None:
    assert not [v for v in resources(cfn, "AWS::SSM::Parameter").values() if v["Properties"]["Name"] == NAME]
    assert not [name for name, v in _env(cfn).items() if {"BATON_POLICY_PARAMETER", "BATON_POLICY_MODE"} & set(v)]


def test_a_policy_that_does_not_load_fails_the_synth_with_its_problems(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cedar"
    bad.write_text('permit(principal, action, resource);\n@id("q") @quorum("2") permit(principal, action, resource);')
    with pytest.raises(ValueError, match="does not load, so it is not deployed") as refused:
        TeamConfig.from_node(App(context={"policy": str(bad)}).node)
    assert "every rule needs an @id" in str(refused.value) and "need @ask" in str(refused.value)
    with pytest.raises(ValueError, match="cannot be read"):
        TeamConfig.from_node(App(context={"policy": str(tmp_path / "missing.cedar")}).node)
    with pytest.raises(ValueError, match="shadow or enforce"):
        TeamConfig.from_node(App(context={"policy": str(POLICY_FILE), "policy_mode": "log"}).node)


def test_a_policy_over_4_kb_takes_the_advanced_tier(tmp_path: Path) -> None:
    from aws_cdk.assertions import Template

    large = tmp_path / "large.cedar"
    large.write_text(
        "\n".join(
            f'@id("allow-{n}") permit(principal, action == Action::"call_tool", resource in Tool::"T{n}");'
            for n in range(80)
        )
    )
    stack = Stack(App())
    functions = {
        name: lambda_.Function(
            stack,
            name,
            runtime=lambda_.Runtime.PYTHON_3_13,
            handler="h.h",
            code=lambda_.Code.from_inline("def h(event, context): return None"),
        )
        for name in POLICY_READERS
    }
    PolicyParameter(stack, "Policy", config=TeamConfig(policy=str(large)), functions=functions)
    Template.from_stack(stack).has_resource_properties(
        "AWS::SSM::Parameter", {"Name": "/baton/dev/policy", "Tier": "Advanced", "Value": large.read_text()}
    )


def test_cdk_nag_finds_nothing_in_the_stack_with_a_policy(synthesized_full: Any) -> None:
    from infra.nag import findings

    found = findings(synthesized_full.stack)
    assert not found, "unacknowledged cdk-nag findings:\n" + "\n".join(str(f) for f in found)
