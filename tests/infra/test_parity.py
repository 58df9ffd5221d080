"""What CDK deploys equals what the local stack runs: the table (baton.workflows.table), the function set
(baton.workflows.resources), the subscriptions' filter policies, and the state-machine definitions after
substitution (function references normalized to the function's name)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.local.provision import local_substitutions
from baton.notify.sns import filter_policy_for
from baton.workflows.asl import load_definition, substitute
from baton.workflows.resources import FUNCTIONS, STATE_MACHINES
from baton.workflows.source_tree import source_tree
from baton.workflows.table import TTL_ATTRIBUTE, create_table_kwargs
from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra


def _by_name(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {item[key]: item for item in items}


def test_table_matches_the_shared_definition(cfn: dict[str, Any]) -> None:
    (table,) = resources(cfn, "AWS::DynamoDB::Table").values()
    props = table["Properties"]
    local = create_table_kwargs(PREFIX)
    assert props["TableName"] == local["TableName"]
    assert props["BillingMode"] == local["BillingMode"]
    assert props["KeySchema"] == local["KeySchema"]
    assert _by_name(props["AttributeDefinitions"], "AttributeName") == _by_name(
        local["AttributeDefinitions"], "AttributeName"
    )
    assert _by_name(props["GlobalSecondaryIndexes"], "IndexName") == _by_name(
        local["GlobalSecondaryIndexes"], "IndexName"
    )
    assert props["TimeToLiveSpecification"]["AttributeName"] == TTL_ATTRIBUTE


def test_function_set_matches_baton_resources(cfn: dict[str, Any]) -> None:
    deployed = {
        v["Properties"]["FunctionName"]: v["Properties"] for v in resources(cfn, "AWS::Lambda::Function").values()
    }
    assert set(deployed) == {f"{PREFIX}-{spec.name}" for spec in FUNCTIONS}
    for spec in FUNCTIONS:
        props = deployed[f"{PREFIX}-{spec.name}"]
        assert props["Handler"] == "handler.lambda_handler"
        assert props["Timeout"] == spec.timeout_seconds
        assert props["MemorySize"] == spec.memory_mb
        assert props["Description"] == spec.description


def test_subscriptions_use_the_shared_filter_policies(cfn: dict[str, Any]) -> None:
    functions = {
        k: v["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-")
        for k, v in resources(cfn, "AWS::Lambda::Function").items()
    }
    lambda_subs: dict[str, Any] = {}
    emails = []
    for sub in resources(cfn, "AWS::SNS::Subscription").values():
        props = sub["Properties"]
        if props["Protocol"] == "lambda":
            lambda_subs[functions[props["Endpoint"]["Fn::GetAtt"][0]]] = props
        elif props["Protocol"] == "email" and props.get("FilterPolicy") == filter_policy_for("email"):
            emails.append(props["Endpoint"])
    expected = {spec.name: spec.subscribes_to_channel for spec in FUNCTIONS if spec.subscribes_to_channel}
    assert set(lambda_subs) == set(expected)  # the test context configures a webhook URL
    for name, channel in expected.items():
        assert lambda_subs[name]["FilterPolicy"] == filter_policy_for(channel)
        assert lambda_subs[name].get("FilterPolicyScope", "MessageAttributes") == "MessageAttributes"
    # The test context sets an SES sender: the email channel is the notify_email Lambda (one mail per
    # recipient, with answer links: tests/infra/test_email_links_infra.py), not an SNS email subscription.
    assert emails == []


def test_state_machine_definitions_match_the_local_stack(cfn: dict[str, Any]) -> None:
    functions = {
        k: v["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-")
        for k, v in resources(cfn, "AWS::Lambda::Function").items()
    }
    deployed = {
        v["Properties"]["StateMachineName"]: v["Properties"]
        for v in resources(cfn, "AWS::StepFunctions::StateMachine").values()
    }
    # The very builder baton.local.provision uses, fed with normalized ARNs: a placeholder the local
    # stack adds or drops shows up here as a difference from the deployed DefinitionSubstitutions.
    local_subs = local_substitutions(
        {spec.name: f"function:{spec.name}" for spec in FUNCTIONS}, lambda wf: f"statemachine:{wf}"
    )

    def normalized(value: Any) -> str:
        if "Fn::GetAtt" in value:
            return f"function:{functions[value['Fn::GetAtt'][0]]}"
        joined = "".join(p if isinstance(p, str) else "<>" for p in value["Fn::Join"][1])
        assert joined.startswith("arn:<>:states:<>:<>:stateMachine:"), joined
        return "statemachine:" + joined.rsplit(":", 1)[1].removeprefix(f"{PREFIX}-")

    for workflow, filename in STATE_MACHINES.items():
        props = deployed[f"{PREFIX}-{workflow}"]
        cdk_subs = {key: normalized(value) for key, value in props["DefinitionSubstitutions"].items()}
        assert cdk_subs == local_subs
        ours = json.loads(substitute(props["DefinitionString"], cdk_subs))
        theirs = json.loads(load_definition(source_tree().statemachines_dir / filename, local_subs))
        assert ours == theirs, workflow


def test_provision_deploys_what_local_substitutions_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local stack's state machines are exactly the ASL files substituted by `local_substitutions`
    (the builder compared with CDK above), so provision.py cannot drift from it unnoticed."""
    import boto3
    from moto import mock_aws

    from baton.local.provision import provision

    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        clients = {n: boto3.client(n) for n in ("iam", "dynamodb", "sns", "lambda", "stepfunctions")}
        out = provision(clients, prefix="baton-parity")
        subs = local_substitutions(out.function_arns, lambda wf: out.state_machine_arns[wf])
        for workflow, filename in STATE_MACHINES.items():
            deployed = clients["stepfunctions"].describe_state_machine(stateMachineArn=out.state_machine_arns[workflow])
            expected = json.loads(load_definition(source_tree().statemachines_dir / filename, subs))
            assert json.loads(deployed["definition"]) == expected, workflow
