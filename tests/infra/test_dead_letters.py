"""Nothing invoked asynchronously is dropped (infra/capabilities/dead_letters.py): the set of functions
Lambda invokes asynchronously is derived from the template (SNS subscriptions, EventBridge targets,
service invoke permissions, S3 notifications, invoke grants to another function's role), and each has an
encrypted, TLS-only dead-letter queue as its on-failure destination (or its DeadLetterConfig), may send to
it, and has a depth alarm to the alarms topic. A new asynchronous invoke without one fails here."""

from __future__ import annotations

from typing import Any

import pytest

from baton.domain.dead_letters import dead_letter_queue_name
from tests.infra.conftest import PREFIX, resources
from tests.infra.test_stack import _actions, _policy_documents, _resources

pytestmark = pytest.mark.infra

# Services that invoke a function with InvocationType=Event (API Gateway and Step Functions' lambda:invoke
# wait for the answer, an event source mapping has its own on-failure destination).
ASYNC_PRINCIPALS = {"sns.amazonaws.com", "events.amazonaws.com", "s3.amazonaws.com"}


def _functions(cfn: dict[str, Any]) -> dict[str, str]:
    """Logical id -> physical name of every function."""
    return {k: v["Properties"]["FunctionName"] for k, v in resources(cfn, "AWS::Lambda::Function").items()}


def _function_ids(cfn: dict[str, Any], reference: Any) -> set[str]:
    """The functions a reference (GetAtt Arn, Ref, a name or an ARN, possibly joined) points at."""
    functions = _functions(cfn)
    if isinstance(reference, dict):
        if "Fn::GetAtt" in reference and reference["Fn::GetAtt"][0] in functions:
            return {reference["Fn::GetAtt"][0]}
        if "Ref" in reference and reference["Ref"] in functions:
            return {reference["Ref"]}
        return {found for value in reference.values() for found in _function_ids(cfn, value)}
    if isinstance(reference, list):
        return {found for value in reference for found in _function_ids(cfn, value)}
    if isinstance(reference, str):
        return {k for k, name in functions.items() if reference == name or reference.endswith(f":function:{name}")}
    return set()


def _invoked_by_services(cfn: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for sid, sub in resources(cfn, "AWS::SNS::Subscription").items():
        if sub["Properties"]["Protocol"] == "lambda":
            found.update(dict.fromkeys(_function_ids(cfn, sub["Properties"]["Endpoint"]), f"SNS subscription {sid}"))
    for rid, rule in resources(cfn, "AWS::Events::Rule").items():
        for target in rule["Properties"].get("Targets", []):
            found.update(dict.fromkeys(_function_ids(cfn, target["Arn"]), f"EventBridge rule {rid}"))
    for pid, permission in resources(cfn, "AWS::Lambda::Permission").items():
        props = permission["Properties"]
        if props["Principal"] in ASYNC_PRINCIPALS:
            found.update(dict.fromkeys(_function_ids(cfn, props["FunctionName"]), f"permission {pid}"))
    for nid, notifications in resources(cfn, "Custom::S3BucketNotifications").items():
        configs = notifications["Properties"]["NotificationConfiguration"].get("LambdaFunctionConfigurations", [])
        for config in configs:
            found.update(dict.fromkeys(_function_ids(cfn, config["LambdaFunctionArn"]), f"S3 notification {nid}"))
    return found


def _invoked_by_functions(cfn: dict[str, Any]) -> dict[str, str]:
    """A function invoked by another function's code: the template cannot tell Event from RequestResponse,
    so every invoke grant to a Lambda role counts (slack_interactions -> slack_worker is InvocationType=Event)."""
    lambda_roles = {
        rid
        for rid, role in resources(cfn, "AWS::IAM::Role").items()
        if "lambda.amazonaws.com" in str(role["Properties"]["AssumeRolePolicyDocument"])
    }
    found: dict[str, str] = {}
    for pid, roles, document in _policy_documents(cfn):
        if lambda_roles & set(roles):
            for statement in document["Statement"]:
                if statement["Effect"] == "Allow" and "lambda:InvokeFunction" in _actions(statement):
                    for resource in _resources(statement):
                        found.update(dict.fromkeys(_function_ids(cfn, resource), f"invoke grant {pid}"))
    return found


def async_invoked(cfn: dict[str, Any]) -> dict[str, str]:
    """function logical id -> how it is invoked asynchronously, from the template alone."""
    return {**_invoked_by_functions(cfn), **_invoked_by_services(cfn)}


def _queue_id(reference: Any) -> str:
    assert isinstance(reference, dict) and "Fn::GetAtt" in reference, reference
    queue_id: str = reference["Fn::GetAtt"][0]
    return queue_id


def _dead_letter_queue(cfn: dict[str, Any], function_id: str) -> str | None:
    """The queue a function's failed async invokes go to: its on-failure destination, else its DLQ."""
    for config in resources(cfn, "AWS::Lambda::EventInvokeConfig").values():
        props = config["Properties"]
        if props["FunctionName"] == {"Ref": function_id}:
            destination = props.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
            if destination is not None:
                return _queue_id(destination)
    dead_letter = cfn["Resources"][function_id]["Properties"].get("DeadLetterConfig")
    return _queue_id(dead_letter["TargetArn"]) if dead_letter else None


def test_the_derivation_sees_every_known_asynchronous_invoke(cfn: dict[str, Any]) -> None:
    """A floor for the derivation (so it cannot silently find nothing): the ones wired today."""
    names = {_functions(cfn)[k].removeprefix(f"{PREFIX}-") for k in async_invoked(cfn)}
    known = {"notify_console", "notify_email", "notify_slack", "notify_webhook", "slack_worker"}
    known |= {"reconcile", "interrupt_sweeper", "run_lifecycle", "build_finished"}
    assert known <= names, known - names


def test_every_asynchronously_invoked_function_has_a_dead_letter_queue(cfn: dict[str, Any]) -> None:
    functions = _functions(cfn)
    missing = {functions[fid]: how for fid, how in async_invoked(cfn).items() if _dead_letter_queue(cfn, fid) is None}
    assert not missing, f"asynchronously invoked with no on-failure destination or DLQ: {missing}"


def test_each_dead_letter_queue_is_encrypted_tls_only_writable_and_alarmed(cfn: dict[str, Any]) -> None:
    functions = _functions(cfn)
    topics = resources(cfn, "AWS::SNS::Topic").items()
    (alarm_topic,) = [k for k, v in topics if v["Properties"]["TopicName"] == f"{PREFIX}-alarms"]
    queue_policies = resources(cfn, "AWS::SQS::QueuePolicy").values()
    alarms = resources(cfn, "AWS::CloudWatch::Alarm").values()
    for fid in async_invoked(cfn):
        queue_id = _dead_letter_queue(cfn, fid)
        assert queue_id is not None, functions[fid]
        queue = cfn["Resources"][queue_id]["Properties"]
        spec_name = functions[fid].removeprefix(f"{PREFIX}-")
        assert queue["QueueName"] == dead_letter_queue_name(PREFIX, spec_name)  # what `baton redrive` looks for
        assert queue.get("SqsManagedSseEnabled") or queue.get("KmsMasterKeyId"), queue_id
        assert queue["MessageRetentionPeriod"] == 14 * 24 * 3600
        tls_only = [
            s
            for p in queue_policies
            if {"Ref": queue_id} in p["Properties"]["Queues"]
            for s in p["Properties"]["PolicyDocument"]["Statement"]
            if s["Effect"] == "Deny" and s.get("Condition") == {"Bool": {"aws:SecureTransport": "false"}}
        ]
        assert tls_only, f"{queue_id} does not refuse plain HTTP"
        role = cfn["Resources"][fid]["Properties"]["Role"]["Fn::GetAtt"][0]
        sends = [
            s
            for _, roles, doc in _policy_documents(cfn)
            if role in roles
            for s in doc["Statement"]
            if "sqs:SendMessage" in _actions(s) and {"Fn::GetAtt": [queue_id, "Arn"]} in _resources(s)
        ]
        assert sends, f"{functions[fid]}'s role may not send to {queue_id}"
        depth = [
            a["Properties"]
            for a in alarms
            if a["Properties"].get("MetricName") == "ApproximateNumberOfMessagesVisible"
            and a["Properties"]["Namespace"] == "AWS/SQS"
            and {"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}} in a["Properties"]["Dimensions"]
        ]
        assert len(depth) == 1, f"{queue_id}: {len(depth)} depth alarms"
        (alarm,) = depth
        # > 0 messages, on the first one
        assert (alarm["ComparisonOperator"], alarm["Threshold"]) in (
            ("GreaterThanOrEqualToThreshold", 1),
            ("GreaterThanThreshold", 0),
        )
        assert {"Ref": alarm_topic} in alarm["AlarmActions"]


def test_each_lambda_subscription_has_its_functions_queue_as_its_own_dead_letter_queue(cfn: dict[str, Any]) -> None:
    """SNS retries a Lambda endpoint on server errors, but a client error (a missing invoke permission, a
    deleted function) is not retried: without the subscription's RedrivePolicy that message is dropped."""
    queue_policies = resources(cfn, "AWS::SQS::QueuePolicy").values()
    subscriptions = [s["Properties"] for s in resources(cfn, "AWS::SNS::Subscription").values()]
    lambda_subscriptions = [s for s in subscriptions if s["Protocol"] == "lambda"]
    assert lambda_subscriptions
    for subscription in lambda_subscriptions:
        (function_id,) = _function_ids(cfn, subscription["Endpoint"])
        redrive = subscription.get("RedrivePolicy")
        assert redrive, f"{function_id}'s subscription has no dead-letter queue"
        queue_id = _dead_letter_queue(cfn, function_id)
        assert redrive["deadLetterTargetArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
        sns_may_send = [
            s
            for p in queue_policies
            if {"Ref": queue_id} in p["Properties"]["Queues"]
            for s in p["Properties"]["PolicyDocument"]["Statement"]
            if s["Effect"] == "Allow"
            and s.get("Principal") == {"Service": "sns.amazonaws.com"}
            and "sqs:SendMessage" in _actions(s)
            and s["Condition"]["ArnEquals"]["aws:SourceArn"] == subscription["TopicArn"]
        ]
        assert sns_may_send, f"the topic may not send to {queue_id}"


def test_each_event_rule_to_a_function_keeps_what_it_could_not_deliver(cfn: dict[str, Any]) -> None:
    """An EventBridge target's retries end in its DeadLetterConfig, else the event is dropped. The rules on
    events that happen once (a build's end, an execution's end) keep theirs in the function's queue; a
    schedule's tick needs none (the next tick does the same work a minute later)."""
    queue_policies = resources(cfn, "AWS::SQS::QueuePolicy").values()
    checked = 0
    for rule_id, rule in resources(cfn, "AWS::Events::Rule").items():
        if "EventPattern" not in rule["Properties"]:
            continue
        for target in rule["Properties"]["Targets"]:
            for function_id in _function_ids(cfn, target["Arn"]):
                queue_id = _dead_letter_queue(cfn, function_id)
                assert target.get("DeadLetterConfig") == {"Arn": {"Fn::GetAtt": [queue_id, "Arn"]}}, rule_id
                events_may_send = [
                    s
                    for p in queue_policies
                    if {"Ref": queue_id} in p["Properties"]["Queues"]
                    for s in p["Properties"]["PolicyDocument"]["Statement"]
                    if s["Effect"] == "Allow"
                    and s.get("Principal") == {"Service": "events.amazonaws.com"}
                    and "sqs:SendMessage" in _actions(s)
                ]
                assert events_may_send, f"{rule_id} may not send to {queue_id}"
                checked += 1
    assert checked >= 2  # build_finished's and run_lifecycle's rules
