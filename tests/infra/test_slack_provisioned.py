"""The Slack interaction function's cold starts, deployed: `-c slack_provisioned_concurrency=N` keeps N
instances initialized (a `live` alias on the current version with provisioned concurrency) and the
interaction URL invokes that alias; without it (the shared synth) there is no alias and the route
invokes the function. A value that is not a small whole number is refused at synth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import CONTEXT, PREFIX, TEAM, resources
from tests.infra.test_stack import _flatten

pytestmark = pytest.mark.infra


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from infra.synth import synthesize

    outdir = tmp_path_factory.mktemp("cdk-slack-warm") / "cdk.out"
    result = synthesize(TEAM, outdir, context={**CONTEXT, "slack_provisioned_concurrency": "2"}, nag=False)
    loaded: dict[str, Any] = json.loads(Path(result.template_path).read_text())
    return loaded


def _interactions_id(cfn: dict[str, Any]) -> str:
    (found,) = [
        k
        for k, v in resources(cfn, "AWS::Lambda::Function").items()
        if v["Properties"]["FunctionName"] == f"{PREFIX}-slack_interactions"
    ]
    return found


def _route_uri(cfn: dict[str, Any]) -> str:
    paths = resources(cfn, "AWS::ApiGateway::Resource")
    (interactions,) = [k for k, v in paths.items() if v["Properties"]["PathPart"] == "interactions"]
    (method,) = [
        m
        for m in resources(cfn, "AWS::ApiGateway::Method").values()
        if m["Properties"]["ResourceId"] == {"Ref": interactions}
    ]
    return _flatten(method["Properties"]["Integration"]["Uri"])


def test_the_option_puts_provisioned_concurrency_on_a_live_alias_the_route_invokes(warm: dict[str, Any]) -> None:
    function = _interactions_id(warm)
    (alias_id, alias), *others = resources(warm, "AWS::Lambda::Alias").items()
    assert others == []
    props = alias["Properties"]
    assert props["Name"] == "live" and props["ProvisionedConcurrencyConfig"] == {"ProvisionedConcurrentExecutions": 2}
    assert props["FunctionName"] == {"Ref": function}
    (version_id,) = resources(warm, "AWS::Lambda::Version")
    assert props["FunctionVersion"] == {"Fn::GetAtt": [version_id, "Version"]}
    uri = _route_uri(warm)
    assert alias_id in uri and f"<{function}.Arn>" not in uri
    # API Gateway may invoke the alias (the permission names it, not only the bare function).
    permissions = [p["Properties"] for p in resources(warm, "AWS::Lambda::Permission").values()]
    assert any(p["FunctionName"] == {"Ref": alias_id} for p in permissions)


def test_without_the_option_the_route_invokes_the_function_and_nothing_is_provisioned(cfn: dict[str, Any]) -> None:
    assert resources(cfn, "AWS::Lambda::Alias") == {}
    assert f"<{_interactions_id(cfn)}.Arn>" in _route_uri(cfn)


@pytest.mark.parametrize("bad", ["-1", "two", "101"])
def test_a_bad_count_is_refused_at_synth(bad: str, tmp_path: Path) -> None:
    from infra.synth import synthesize

    with pytest.raises(ValueError, match="slack_provisioned_concurrency"):
        synthesize(TEAM, tmp_path / "cdk.out", context={**CONTEXT, "slack_provisioned_concurrency": bad}, nag=False)
