"""Web Push deployed (infra/capabilities/web_push.py): the VAPID key is an EMPTY Secrets Manager secret (the
operator fills it with `baton push init-vapid`), and exactly the two functions that push (the API: a claim
reassigned; gate_deadline: a ladder's escalation) may read it, named in their environment. A notification's
one-tap answer, `POST /api/push/answer`, is on the people's API with no Cognito auth (its credential is the
authority) and no CORS: the inbox's distribution serves `/api/*` from that API, one origin."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import PREFIX, resources
from tests.infra.test_email_links_infra import _functions, _role_of, _statements

pytestmark = pytest.mark.infra


def test_the_vapid_key_is_an_empty_secret_read_only_by_the_functions_that_push(cfn: dict[str, Any]) -> None:
    secrets = resources(cfn, "AWS::SecretsManager::Secret").items()
    [(secret_id, secret)] = [(k, v) for k, v in secrets if v["Properties"]["Name"] == f"{PREFIX}/vapid-private-key"]
    assert "GenerateSecretString" not in secret["Properties"] and "SecretString" not in secret["Properties"]
    functions = _functions(cfn)
    readers: dict[str, list[Any]] = {}
    for name, fn in functions.items():
        for statement in _statements(cfn, _role_of(fn)):
            resource = statement["Resource"]
            if {"Ref": secret_id} == resource or (isinstance(resource, list) and {"Ref": secret_id} in resource):
                readers.setdefault(name, []).append(statement["Action"])
    assert set(readers) == {"api", "gate_deadline"}
    for name, actions in readers.items():
        assert actions == ["secretsmanager:GetSecretValue"], actions  # nothing more on it
        assert functions[name]["Environment"]["Variables"]["BATON_VAPID_SECRET_ID"] == {"Ref": secret_id}
    others = [n for n, fn in functions.items() if n not in readers]
    assert all(
        "secretsmanager:GetSecretValue" not in json.dumps(s) or "vapid" not in json.dumps(s).lower()
        for n in others
        for s in _statements(cfn, _role_of(functions[n]))
    )


def test_the_one_tap_answer_is_a_public_post_on_the_peoples_api_behind_the_inboxs_own_origin(
    cfn: dict[str, Any], synthesized: Any
) -> None:
    resources_by_id = {k: v["Properties"] for k, v in resources(cfn, "AWS::ApiGateway::Resource").items()}

    def path_of(resource_id: str) -> str:
        parts = []
        while resource_id in resources_by_id:
            props = resources_by_id[resource_id]
            parts.append(props["PathPart"])
            resource_id = props["ParentId"].get("Ref", "") if isinstance(props["ParentId"], dict) else ""
        return "/" + "/".join(reversed(parts))

    apis = {k: v["Properties"]["Name"] for k, v in resources(cfn, "AWS::ApiGateway::RestApi").items()}
    methods = [
        m["Properties"]
        for m in resources(cfn, "AWS::ApiGateway::Method").values()
        if path_of(m["Properties"]["ResourceId"]["Ref"]) == "/api/push/answer"
    ]
    assert [m["HttpMethod"] for m in methods] == ["POST"]  # no OPTIONS: no CORS preflight, one origin
    [answer] = methods
    assert answer["AuthorizationType"] == "NONE" and "AuthorizerId" not in answer
    assert apis[answer["RestApiId"]["Ref"]] == f"{PREFIX}-web"  # the people's API, which the inbox fronts
    assert answer["Integration"]["Type"] == "AWS_PROXY"
    api_fn = _functions(cfn)["api"]["id"]
    assert api_fn in json.dumps(answer["Integration"]["Uri"])
    # The worker's request is same-origin: the inbox's distribution sends `/api/*`, POST included, to that
    # API's stage (infra/capabilities/inbox.py), so the route needs no CORS.
    inbox = json.loads((synthesized.outdir / synthesized.stack.inbox.template_file).read_text())
    [distribution] = resources(inbox, "AWS::CloudFront::Distribution").values()
    config = distribution["Properties"]["DistributionConfig"]
    [api_behaviour] = [b for b in config["CacheBehaviors"] if b["PathPattern"] == "/api/*"]
    assert "POST" in api_behaviour["AllowedMethods"]
    [origin] = [o for o in config["Origins"] if o["Id"] == api_behaviour["TargetOriginId"]]
    assert "People" in json.dumps(origin), origin  # the people's REST API (its URL, passed to the nested stack)
