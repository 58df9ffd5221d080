"""The deployed Origin check's configuration (issue 29 item 1): `-c allowed_origins=...` reaches the API and
MCP functions as BATON_ALLOWED_ORIGINS (normalized), no other function, and the inbox distribution runs its
edge check on `/api/*` (baton/domain/origins.py, infra/capabilities/inbox.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.capabilities.inbox import API_ORIGIN_CHECK
from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra


def test_the_api_and_mcp_functions_get_the_allowed_origins_and_no_other_function_does(cfn: dict[str, Any]) -> None:
    env = {
        f["Properties"]["FunctionName"].removeprefix(f"{PREFIX}-"): f["Properties"]
        .get("Environment", {})
        .get("Variables", {})
        for f in resources(cfn, "AWS::Lambda::Function").values()
        if isinstance(f["Properties"].get("FunctionName"), str)
    }
    having = {name: v["BATON_ALLOWED_ORIGINS"] for name, v in env.items() if "BATON_ALLOWED_ORIGINS" in v}
    assert having == {
        "api": "https://tools.example.com,https://ops.example.com",
        "mcp": "https://tools.example.com,https://ops.example.com",
    }


def test_the_inbox_distribution_checks_the_origin_of_api_requests(synthesized: Any) -> None:
    inbox = json.loads((synthesized.outdir / synthesized.stack.inbox.template_file).read_text())
    functions = resources(inbox, "AWS::CloudFront::Function")
    (check_id,) = [k for k, f in functions.items() if f["Properties"]["FunctionCode"] == API_ORIGIN_CHECK]
    (distribution,) = resources(inbox, "AWS::CloudFront::Distribution").values()
    behaviors = distribution["Properties"]["DistributionConfig"]["CacheBehaviors"]
    (api,) = [b for b in behaviors if b["PathPattern"] == "/api/*"]
    assert api["FunctionAssociations"] == [
        {"EventType": "viewer-request", "FunctionARN": {"Fn::GetAtt": [check_id, "FunctionARN"]}}
    ]
