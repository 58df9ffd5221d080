"""Passkeys deployed (issue 32, item 3): `-c webauthn_rp_id=<the inbox's host>` reaches the functions that
answer tool approvals, the API and the Slack worker (where a high risk approve is then refused: Slack cannot
carry a passkey), as BATON_WEBAUTHN_RP_ID, lower case, and no other function; a value that is not a host
name is refused at synth."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.config import TeamConfig
from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra


def test_the_api_and_the_slack_worker_get_the_relying_party(synthesized_full: Any) -> None:
    cfn = json.loads(synthesized_full.template_path.read_text())
    having = {
        f["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): variables["BATON_WEBAUTHN_RP_ID"]
        for f in resources(cfn, "AWS::Lambda::Function").values()
        if isinstance(f["Properties"].get("FunctionName"), str)
        and "BATON_WEBAUTHN_RP_ID" in (variables := f["Properties"].get("Environment", {}).get("Variables", {}))
    }
    assert having == {"api": "inbox.example.com", "slack_worker": "inbox.example.com"}


@pytest.mark.parametrize("rp_id", ["https://inbox.example.com", "inbox.example.com:443", "inbox.example.com/inbox"])
def test_a_relying_party_that_is_not_a_host_name_is_refused(rp_id: str) -> None:
    with pytest.raises(ValueError, match="webauthn_rp_id"):
        TeamConfig(webauthn_rp_id=rp_id)
