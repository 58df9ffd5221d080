"""Web Push deployed (infra/capabilities/web_push.py): the VAPID key is an EMPTY Secrets Manager secret (the
operator fills it with `baton push init-vapid`), and exactly the two functions that push (the API: a claim
reassigned; gate_deadline: a ladder's escalation) may read it, named in their environment."""

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
