"""Template assertions on the important properties of a team environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match

from baton.workflows.asl import check_definition, substitute
from baton.workflows.input_schema import load_schemas
from baton.workflows.resources import FUNCTIONS, STATE_MACHINES
from baton.workflows.source_tree import source_tree
from baton.workflows.table import TTL_ATTRIBUTE
from infra.assets import shipped_files
from tests.infra.conftest import PREFIX, TEAM, resources

pytestmark = pytest.mark.infra

SEND_TASK = {"states:SendTaskSuccess", "states:SendTaskFailure"}


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement.get("Action", [])
    return [action] if isinstance(action, str) else list(action)


def _resources(statement: dict[str, Any]) -> list[Any]:
    resource = statement.get("Resource", [])
    return resource if isinstance(resource, list) else [resource]


def _flatten(value: Any) -> str:
    """A Fn::Join/Fn::Sub/Ref structure as a readable string (intrinsics as <...>)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(_flatten(p) for p in parts)
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return f"<{'.'.join(value['Fn::GetAtt'])}>"
    return json.dumps(value, sort_keys=True)


def _layer_id(cfn: dict[str, Any], name: str) -> str:
    (found,) = [
        k for k, v in resources(cfn, "AWS::Lambda::LayerVersion").items() if v["Properties"]["LayerName"] == name
    ]
    return found


def _may_send_task(action: str) -> bool:
    if action in SEND_TASK or action in ("*", "states:*"):
        return True
    return action.endswith("*") and any(a.startswith(action[:-1]) for a in SEND_TASK)


def test_send_task_is_scoped_to_batons_state_machines(cfn: dict[str, Any]) -> None:
    allowed = {
        f"arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:stateMachine:{PREFIX}-{wf}"
        for wf in STATE_MACHINES
    }
    holders = []
    for logical_id, policy in resources(cfn, "AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if any(_may_send_task(a) for a in _actions(statement)):
                holders.append(logical_id)
                assert statement["Effect"] == "Allow"
                targets = {_flatten(r) for r in _resources(statement)}
                assert targets <= allowed, f"{logical_id} may SendTask* on {targets - allowed}"
    # The API (resumes gates) and build_finished (a build's end) - not the build, nor the base set.
    assert any(h.startswith("FunctionsapiRole") for h in holders)
    assert any(h.startswith("FunctionsbuildfinishedRole") for h in holders)
    assert not any(h.startswith("MergeProjectRole") for h in holders)
    for name in ("park", "gate_timeout", "notify_console", "notify_slack", "notify_webhook"):
        assert not any(h.startswith(f"Functions{name.replace('_', '')}Role") for h in holders), name


def test_no_scan_and_no_wildcard_actions_on_data(cfn: dict[str, Any]) -> None:
    for logical_id, policy in resources(cfn, "AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = _actions(statement)
            assert "dynamodb:Scan" not in actions, logical_id
            assert not any(a in ("*", "dynamodb:*", "states:*", "sns:*", "lambda:*") for a in actions), logical_id


def _definitions(cfn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """State machine name -> definition with every substitution replaced by `fn:<function name>`."""
    functions = {k: v["Properties"]["FunctionName"] for k, v in resources(cfn, "AWS::Lambda::Function").items()}
    out = {}
    for machine in resources(cfn, "AWS::StepFunctions::StateMachine").values():
        props = machine["Properties"]
        subs = {}
        for key, value in props.get("DefinitionSubstitutions", {}).items():
            if "Fn::GetAtt" in value:
                logical_id, attribute = value["Fn::GetAtt"]
                assert attribute == "Arn"
                subs[key] = "fn:" + functions[logical_id].removeprefix(f"{PREFIX}-")
            else:  # another Baton state machine, by its known name
                subs[key] = _flatten(value)
        definition = props["DefinitionString"]
        assert isinstance(definition, str), "the definition is the ASL file verbatim; functions come in by substitution"
        out[props["StateMachineName"]] = json.loads(substitute(definition, subs))
    return out


def _token_waits(states: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for state in states.values():
        if str(state.get("Resource", "")).endswith(".waitForTaskToken"):
            found.append(state)
        for branch in state.get("Branches", []):
            found += _token_waits(branch["States"])
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            found += _token_waits(processor["States"])
    return found


def test_every_token_wait_has_a_timeout(cfn: dict[str, Any]) -> None:
    definitions = _definitions(cfn)
    assert set(definitions) == {f"{PREFIX}-{wf}" for wf in STATE_MACHINES}
    schemas = load_schemas()  # the execution-name rule (C302) bounds input fields by them
    waits = 0
    for name, definition in definitions.items():
        workflow = name.removeprefix(f"{PREFIX}-")
        assert check_definition(definition, STATE_MACHINES[workflow], input_schema=schemas.get(workflow)) == []
        for state in _token_waits(definition["States"]):
            waits += 1
            assert "TimeoutSeconds" in state or "TimeoutSecondsPath" in state, (name, state)
    assert waits >= 1


def test_state_machines_log_and_trace(template: Any) -> None:
    template.all_resources_properties(
        "AWS::StepFunctions::StateMachine",
        {
            "TracingConfiguration": {"Enabled": True},
            "LoggingConfiguration": Match.object_like({"Level": "ALL"}),
            "StateMachineName": Match.string_like_regexp(f"^{PREFIX}-"),
        },
    )


def test_topics_are_kms_encrypted_and_tls_only(cfn: dict[str, Any], template: Any) -> None:
    topics = resources(cfn, "AWS::SNS::Topic")
    assert {t["Properties"]["TopicName"] for t in topics.values()} == {f"{PREFIX}-notifications", f"{PREFIX}-alarms"}
    for topic in topics.values():
        assert "Fn::GetAtt" in topic["Properties"]["KmsMasterKeyId"]
    template.all_resources_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    template.resource_count_is("AWS::SNS::TopicPolicy", 2)  # enforce_ssl on both


def test_table_has_pitr_ttl_on_demand_and_is_retained(template: Any) -> None:
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "Properties": Match.object_like(
                {
                    "TableName": PREFIX,
                    "BillingMode": "PAY_PER_REQUEST",
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                    "TimeToLiveSpecification": {"AttributeName": TTL_ATTRIBUTE, "Enabled": True},
                    "DeletionProtectionEnabled": True,
                }
            ),
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
        },
    )


def test_alarms_and_dashboard_exist(cfn: dict[str, Any], template: Any) -> None:
    alarms = {a["Properties"]["AlarmName"] for a in resources(cfn, "AWS::CloudWatch::Alarm").values()}
    expected = {f"{PREFIX}-{spec.name}-errors" for spec in FUNCTIONS}
    expected |= {f"{PREFIX}-{wf}-failed" for wf in STATE_MACHINES} | {
        f"{PREFIX}-{wf}-timed-out" for wf in STATE_MACHINES
    }
    expected |= {f"{PREFIX}-gates-parked-too-long", f"{PREFIX}-machines-5xx", f"{PREFIX}-people-5xx"}
    assert expected <= alarms, expected - alarms
    template.all_resources_properties("AWS::CloudWatch::Alarm", {"AlarmActions": Match.any_value()})
    template.has_resource_properties(
        "AWS::Logs::MetricFilter", {"FilterPattern": Match.string_like_regexp("TaskTimedOut")}
    )
    template.has_resource_properties("AWS::CloudWatch::Dashboard", {"DashboardName": PREFIX})


def test_api_split_iam_for_machines_cognito_for_people(cfn: dict[str, Any], template: Any) -> None:
    apis = {v["Properties"]["Name"] for v in resources(cfn, "AWS::ApiGateway::RestApi").values()}
    assert apis == {f"{PREFIX}-api", f"{PREFIX}-web"}
    methods = resources(cfn, "AWS::ApiGateway::Method")
    # /api/{proxy+} on both APIs, /mcp (the MCP server) on the machines' API only, and the Slack app's
    # POST /slack/interactions (signed by Slack, no IAM or Cognito: tests/infra/test_slack_infra.py); the
    # email answer links' GET and POST /answer/{link} (their own credential) are held by
    # tests/infra/test_email_links_infra.py, a push's one-tap POST /api/push/answer (its credential) by
    # tests/infra/test_web_push_infra.py.
    unauthenticated = {k for k, m in methods.items() if m["Properties"]["AuthorizationType"] == "NONE"}
    answer_links = {k for k in unauthenticated if "answerlink" in k.lower()}
    push_answer = {k for k in unauthenticated if "pushanswer" in k.lower()}
    assert (len(answer_links), len(push_answer)) == (2, 1)
    methods = {k: m for k, m in methods.items() if k not in answer_links | push_answer}
    assert sorted(m["Properties"]["AuthorizationType"] for m in methods.values()) == [
        "AWS_IAM",
        "AWS_IAM",
        "COGNITO_USER_POOLS",
        "NONE",
    ]
    for method in methods.values():
        assert method["Properties"]["Integration"]["Type"] == "AWS_PROXY"
        assert method["Properties"]["HttpMethod"] == (
            "POST" if method["Properties"]["AuthorizationType"] == "NONE" else "ANY"
        )
    template.all_resources_properties(
        "AWS::ApiGateway::Stage",
        {
            "StageName": "live",
            "AccessLogSetting": Match.object_like({"DestinationArn": Match.any_value()}),
            "TracingEnabled": True,
            "MethodSettings": Match.array_with(
                [
                    Match.object_like(
                        {"ThrottlingRateLimit": Match.any_value(), "ThrottlingBurstLimit": Match.any_value()}
                    )
                ]
            ),
        },
    )
    template.has_resource_properties(
        "AWS::Cognito::UserPool",
        {"MfaConfiguration": "ON", "AdminCreateUserConfig": {"AllowAdminCreateUserOnly": True}},
    )


def test_functions_runtime_layers_and_environment(cfn: dict[str, Any]) -> None:
    for fn in resources(cfn, "AWS::Lambda::Function").values():
        props = fn["Properties"]
        assert props["Runtime"].startswith("python3.")
        assert props["Architectures"] == ["arm64"]
        assert props["TracingConfig"] == {"Mode": "Active"}
        layers = [_flatten(layer) for layer in props["Layers"]]
        # Baton's own runtime layer, not the AWS-managed Powertools one (tests/infra/test_runtime_layer.py).
        assert f"<{_layer_id(cfn, f'{PREFIX}-runtime')}>" in layers and not any(":layer:" in x for x in layers)
        # The MCP server has one more: the SDK's types package (infra/capabilities/mcp.py); so have the
        # Slack app's functions: slack_sdk (infra/capabilities/slack.py).
        with_own_layer = (f"{PREFIX}-mcp", f"{PREFIX}-slack_interactions", f"{PREFIX}-slack_worker")
        assert len(layers) == (3 if props["FunctionName"] in with_own_layer else 2)
        env = props["Environment"]["Variables"]
        assert env["BATON_TABLE_NAME"] == {"Ref": next(iter(resources(cfn, "AWS::DynamoDB::Table")))}
        assert "Ref" in env["BATON_TOPIC_ARN"]
        workflows = _flatten(env["BATON_WORKFLOWS"])
        for wf in STATE_MACHINES:
            assert (
                f'"{wf}":"arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:stateMachine:{PREFIX}-{wf}"'
                in (workflows)
            )


def test_slack_reads_its_url_from_ssm(cfn: dict[str, Any]) -> None:
    slack = next(
        v
        for v in resources(cfn, "AWS::Lambda::Function").values()
        if v["Properties"]["FunctionName"].endswith("notify_slack")
    )
    assert (
        slack["Properties"]["Environment"]["Variables"]["SLACK_WEBHOOK_PARAMETER"] == f"/baton/{TEAM}/slack-webhook-url"
    )
    statements = [
        s
        for k, p in resources(cfn, "AWS::IAM::Policy").items()
        if k.startswith("FunctionsnotifyslackRole")
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    ssm = [s for s in statements if "ssm:GetParameter" in _actions(s)]
    assert [_flatten(r) for r in _resources(ssm[0])] == [
        f"arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/baton/{TEAM}/slack-webhook-url"
    ]


def test_merge_project_runs_baton_merge(cfn: dict[str, Any]) -> None:
    (project,) = resources(cfn, "AWS::CodeBuild::Project").values()
    props = project["Properties"]
    assert props["Name"] == f"{PREFIX}-merge"
    assert "python3 -m baton.merge.build" in props["Source"]["BuildSpec"]
    assert "send-task" not in props["Source"]["BuildSpec"]
    assert props["Environment"]["PrivilegedMode"] is False
    assert "EncryptionKey" in props
    env = {v["Name"]: v["Value"] for v in props["Environment"]["EnvironmentVariables"]}
    assert env["BATON_REPO_URL"].endswith("/v1/repos/agent-work")


def test_every_name_and_export_carries_the_team(cfn: dict[str, Any]) -> None:
    name_keys = (
        "FunctionName",
        "TableName",
        "TopicName",
        "StateMachineName",
        "UserPoolName",
        "DashboardName",
        "AlarmName",
        "LogGroupName",
        "LayerName",
    )
    for logical_id, resource in cfn["Resources"].items():
        props = resource.get("Properties", {})
        for key in name_keys:
            if key in props and not ("Fn::GetAtt" in props[key] or "Ref" in props[key]):  # references to resources
                assert PREFIX in _flatten(props[key]), (logical_id, key, props[key])
    for output in cfn["Outputs"].values():
        assert output["Export"]["Name"].startswith(f"{PREFIX}-")


def test_scheduled_functions_and_the_companion_grant(cfn: dict[str, Any]) -> None:
    from infra.permissions import schedule_for

    rules = {r["Properties"]["Name"]: r["Properties"] for r in resources(cfn, "AWS::Events::Rule").values()}
    for spec in FUNCTIONS:
        if schedule_for(spec):
            assert rules[f"{PREFIX}-{spec.name}"]["ScheduleExpression"] == schedule_for(spec)
    if any(spec.name == "review_turn" for spec in FUNCTIONS):
        statements = [
            s
            for k, p in resources(cfn, "AWS::IAM::Policy").items()
            if k.startswith("FunctionsreviewturnRole")
            for s in p["Properties"]["PolicyDocument"]["Statement"]
        ]
        bedrock = [s for s in statements if "bedrock:InvokeModel" in _actions(s)]
        assert bedrock and all("claude-sonnet-4" in _flatten(r) for r in _resources(bedrock[0]))


# The only actions a Baton role may be granted on Resource "*": X-Ray (no resource-level permissions)
# and, on a state machine's role, Step Functions' vended-log delivery (likewise). Anything else is a
# wildcard grant that infra/suppressions.py's IAM5[Resource::*] acknowledgement would hide.
XRAY_ACTIONS = {"xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"}
LOG_DELIVERY_ACTIONS = {
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
}


def _policy_documents(cfn: dict[str, Any]) -> list[tuple[str, list[str], dict[str, Any]]]:
    """(resource id, role ids it applies to, policy document) for every IAM policy in the template."""
    found: list[tuple[str, list[str], dict[str, Any]]] = []
    for rid, res in cfn["Resources"].items():
        props = res.get("Properties", {})
        if res["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            roles = [r["Ref"] for r in props.get("Roles", []) if isinstance(r, dict) and "Ref" in r]
            found.append((rid, roles, props["PolicyDocument"]))
        elif res["Type"] == "AWS::IAM::Role":
            found.extend((rid, [rid], p["PolicyDocument"]) for p in props.get("Policies", []))
    return found


def test_resource_star_is_only_xray_or_state_machine_log_delivery(cfn: dict[str, Any]) -> None:
    machine_roles = {
        m["Properties"]["RoleArn"]["Fn::GetAtt"][0] for m in resources(cfn, "AWS::StepFunctions::StateMachine").values()
    }
    star_statements = 0
    for rid, roles, document in _policy_documents(cfn):
        for statement in document["Statement"]:
            if statement.get("Effect") != "Allow" or "*" not in _resources(statement):
                continue
            star_statements += 1
            allowed = set(XRAY_ACTIONS)
            if roles and set(roles) <= machine_roles:
                allowed |= LOG_DELIVERY_ACTIONS
            extra = set(_actions(statement)) - allowed
            assert not extra, f"{rid} grants {sorted(extra)} on Resource '*'"
    assert star_statements >= len(FUNCTIONS)  # X-Ray on every function role at least


def test_review_functions_know_the_deployed_repository(cfn: dict[str, Any]) -> None:
    """-c repository=... reaches the review gate (BATON_MERGE_REPOSITORY), which refuses to start without it."""
    from tests.infra.conftest import CONTEXT

    env = {
        v["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): v["Properties"]["Environment"]["Variables"]
        for v in resources(cfn, "AWS::Lambda::Function").values()
    }
    for name in ("review_turn", "merge_start", "diff_start"):
        assert env[name]["BATON_MERGE_REPOSITORY"] == CONTEXT["repository"], name
        assert env[name]["BATON_MERGE_RUNNER"] == "codebuild"


def test_oldest_parked_gate_alarm_and_widget(cfn: dict[str, Any], template: Any) -> None:
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": f"{PREFIX}-oldest-parked-gate",
            "Namespace": f"Baton/{TEAM}",
            "MetricName": "OldestParkedGateAgeSeconds",
            "Dimensions": [{"Name": "service", "Value": "baton"}],
            "Statistic": "Maximum",
            "Threshold": 24 * 3600,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "AlarmActions": Match.any_value(),
        },
    )
    (dashboard,) = resources(cfn, "AWS::CloudWatch::Dashboard").values()
    body = _flatten(dashboard["Properties"]["DashboardBody"])
    assert "OldestParkedGateAgeSeconds" in body and "ParkedGates" in body
    # The reconcile Lambda publishes it (EMF through its logs) in the namespace the alarm reads.
    reconcile = next(
        v["Properties"]
        for v in resources(cfn, "AWS::Lambda::Function").values()
        if v["Properties"]["FunctionName"] == f"{PREFIX}-reconcile"
    )
    assert reconcile["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"] == f"Baton/{TEAM}"


def test_only_the_api_knows_which_iam_principals_are_agents(cfn: dict[str, Any]) -> None:
    from tests.infra.conftest import CONTEXT

    env = {
        v["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): v["Properties"]["Environment"]["Variables"]
        for v in resources(cfn, "AWS::Lambda::Function").values()
    }
    assert env["api"]["BATON_AGENT_PRINCIPAL_PATTERN"] == CONTEXT["agent_principal_pattern"]
    assert env["mcp"]["BATON_AGENT_PRINCIPAL_PATTERN"] == CONTEXT["agent_principal_pattern"]  # the MCP door too
    assert all("BATON_AGENT_PRINCIPAL_PATTERN" not in e for name, e in env.items() if name not in ("api", "mcp"))


def _staged_asset(synthesized: Any, s3_key: str) -> Path:
    """The folder the CDK staged for the asset uploaded as `<hash>.zip`."""
    asset_hash = s3_key.rsplit("/", 1)[-1].removesuffix(".zip")
    manifest = json.loads((synthesized.outdir / f"{synthesized.stack.stack_name}.assets.json").read_text())
    folder: Path = synthesized.outdir / manifest["files"][asset_hash]["source"]["path"]
    return folder


def test_the_layer_asset_ships_no_cli_local_stack_client_or_fake(cfn: dict[str, Any], synthesized: Any) -> None:
    (layer,) = [
        v
        for v in resources(cfn, "AWS::Lambda::LayerVersion").values()
        if v["Properties"]["LayerName"] == f"{PREFIX}-baton"
    ]
    folder = _staged_asset(synthesized, layer["Properties"]["Content"]["S3Key"])
    # Exactly what infra/assets.py says ships (what scripts/check_lambda_imports.py imports from), and
    # its bytecode (compiled for the runtime: tests/infra/test_asset_bytecode.py).
    staged = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.suffix != ".pyc")
    assert staged == shipped_files(source_tree().layer_dir)
    assert "python/baton/runtime/wiring.py" in staged and "python/baton/merge/__main__.py" in staged
    for left_out in (
        "python/baton/cli/",
        "python/baton/local/",
        "python/baton/client/",
        "python/baton/integrations/",
        "fakes/",
    ):
        assert not any(left_out in path for path in staged), left_out
    fakes = ("class MemoryStore", "class RecordingNotifier", "class RecordingTaskTokens", "class FakeWorkflows")
    for path in staged:
        text = (folder / path).read_text()
        assert not any(fake in text for fake in fakes), path
    # The merge build's package is the same asset (one exclude list, one upload).
    (project,) = resources(cfn, "AWS::CodeBuild::Project").values()
    assert _flatten(project["Properties"]["Source"]["Location"]).endswith(layer["Properties"]["Content"]["S3Key"])


def test_the_mcp_server_is_behind_the_machines_api_with_iam_and_its_types_layer(
    cfn: dict[str, Any], synthesized: Any
) -> None:
    from infra.capabilities.mcp import MCP_TYPES, locked_version

    methods = resources(cfn, "AWS::ApiGateway::Method")
    paths = {
        k: v for k, v in resources(cfn, "AWS::ApiGateway::Resource").items() if v["Properties"]["PathPart"] == "mcp"
    }
    (path_id,) = paths
    (method,) = [m for m in methods.values() if m["Properties"]["ResourceId"] == {"Ref": path_id}]
    assert method["Properties"]["AuthorizationType"] == "AWS_IAM"
    assert f"{PREFIX}-api" in json.dumps(cfn["Resources"][paths[path_id]["Properties"]["RestApiId"]["Ref"]])
    assert "mcp" in _flatten(method["Properties"]["Integration"]["Uri"])
    (layer,) = [
        v
        for v in resources(cfn, "AWS::Lambda::LayerVersion").values()
        if v["Properties"]["LayerName"] == f"{PREFIX}-mcp-types"
    ]
    folder = _staged_asset(synthesized, layer["Properties"]["Content"]["S3Key"])
    staged = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert "python/mcp_types/__init__.py" in staged and "python/mcp_types.LICENSE" in staged
    assert not any(path.endswith(".so") for path in staged)  # pure Python: any architecture
    assert locked_version(MCP_TYPES) in layer["Properties"]["Description"]
