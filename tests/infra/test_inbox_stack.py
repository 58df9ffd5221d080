"""The deployed inbox (infra/capabilities/inbox.py, a nested stack), checked offline on its synthesized
template: a private, TLS-only bucket read by CloudFront through an origin access control, the API behind
the same distribution, the Cognito app client of the sign-in, and the placeholder page when `inbox/dist`
is absent."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aws_cdk.assertions import Match

from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra
ASSET_CACHE = "public, max-age=31536000, immutable"


@pytest.fixture(scope="module")
def inbox_cfn(synthesized: Any) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((synthesized.outdir / synthesized.stack.inbox.template_file).read_text())
    return loaded


@pytest.fixture(scope="module")
def inbox_template(inbox_cfn: dict[str, Any]) -> Any:
    from aws_cdk.assertions import Template

    return Template.from_json(inbox_cfn)


def _one(cfn: dict[str, Any], type_: str, contains: str) -> tuple[str, dict[str, Any]]:
    (found,) = [(k, v) for k, v in resources(cfn, type_).items() if contains in k]
    return found


def test_the_bucket_is_private_tls_only_and_read_by_cloudfront_alone(inbox_cfn: dict[str, Any]) -> None:
    cfn = inbox_cfn
    site_id, site = _one(cfn, "AWS::S3::Bucket", "Site")
    props = site["Properties"]
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"] == {
        "SSEAlgorithm": "AES256"
    }
    assert props["LoggingConfiguration"]["LogFilePrefix"] == "s3/"  # into the access-log bucket
    (policy,) = [
        p for p in resources(cfn, "AWS::S3::BucketPolicy").values() if p["Properties"]["Bucket"] == {"Ref": site_id}
    ]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    tls = [s for s in statements if s["Effect"] == "Deny"]
    assert tls and tls[0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    allows = [s for s in statements if s["Effect"] == "Allow"]
    assert allows and all(s["Principal"] == {"Service": "cloudfront.amazonaws.com"} for s in allows)
    assert all("AWS:SourceArn" in json.dumps(s["Condition"]) for s in allows)  # this distribution only
    assert all(_actions == ["s3:GetObject"] for _actions in ([s["Action"]] for s in allows))


def test_the_distribution_serves_the_app_over_oac_and_the_api_uncached(
    inbox_cfn: dict[str, Any], inbox_template: Any
) -> None:
    cfn, template = inbox_cfn, inbox_template
    template.has_resource_properties(
        "AWS::CloudFront::OriginAccessControl",
        {
            "OriginAccessControlConfig": Match.object_like(
                {"OriginAccessControlOriginType": "s3", "SigningBehavior": "always", "SigningProtocol": "sigv4"}
            )
        },
    )
    _, distribution = _one(cfn, "AWS::CloudFront::Distribution", "Distribution")
    config = distribution["Properties"]["DistributionConfig"]
    s3_origins = [o for o in config["Origins"] if "S3OriginConfig" in o]
    assert len(s3_origins) == 1 and s3_origins[0]["OriginAccessControlId"]
    assert s3_origins[0]["S3OriginConfig"] == {"OriginAccessIdentity": ""}  # OAC, not a legacy OAI
    api_origins = [o for o in config["Origins"] if "CustomOriginConfig" in o]
    assert len(api_origins) == 1 and "ApiPeople" in json.dumps(api_origins[0])  # the Cognito-authorized API
    assert api_origins[0]["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    assert config["DefaultCacheBehavior"]["ViewerProtocolPolicy"] == "redirect-to-https"
    assert config["DefaultCacheBehavior"]["FunctionAssociations"][0]["EventType"] == "viewer-request"
    behaviors = {b["PathPattern"]: b for b in config["CacheBehaviors"]}
    api = behaviors["/api/*"]
    assert api["ViewerProtocolPolicy"] == "https-only"
    assert api["CachePolicyId"] == "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # Managed-CachingDisabled
    assert api["OriginRequestPolicyId"] == "b689b0a8-53d0-40ab-baf2-68738e2966ac"  # AllViewerExceptHostHeader
    assert set(api["AllowedMethods"]) == {"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"}
    assert "/inbox/assets/*" in behaviors
    assert config["Logging"]["Prefix"] == "cloudfront/" and config["HttpVersion"] == "http2and3"
    template.has_resource_properties(
        "AWS::CloudFront::ResponseHeadersPolicy",
        {
            "ResponseHeadersPolicyConfig": Match.object_like(
                {
                    "Name": f"{PREFIX}-inbox-assets",
                    "CustomHeadersConfig": {
                        "Items": [
                            {
                                "Header": "Cache-Control",
                                "Value": "public, max-age=31536000, immutable",
                                "Override": True,
                            }
                        ]
                    },
                    "SecurityHeadersConfig": Match.object_like(
                        {"FrameOptions": {"FrameOption": "DENY", "Override": True}}
                    ),
                }
            )
        },
    )


def test_the_sign_in_is_a_public_code_flow_client_back_to_the_distribution(
    inbox_cfn: dict[str, Any], cfn: dict[str, Any]
) -> None:
    _, client = _one(inbox_cfn, "AWS::Cognito::UserPoolClient", "InboxSignIn")
    props = client["Properties"]
    assert props["ClientName"] == f"{PREFIX}-inbox-sign-in"
    assert props["GenerateSecret"] is False and props["AllowedOAuthFlows"] == ["code"]
    assert props["AllowedOAuthFlowsUserPoolClient"] is True
    assert set(props["AllowedOAuthScopes"]) == {"openid", "email", "profile"}
    assert props["SupportedIdentityProviders"] == ["COGNITO"] and props["PreventUserExistenceErrors"] == "ENABLED"
    (callback,) = props["CallbackURLs"]
    assert "Distribution" in json.dumps(callback) and json.dumps(callback).endswith('/inbox/"]]}')
    pool = _one(cfn, "AWS::Cognito::UserPool", "Operators")[0]
    assert "Ref" in props["UserPoolId"] and pool in json.dumps(cfn["Resources"])  # the operators' pool, passed in
    assert len(resources(inbox_cfn, "AWS::Cognito::UserPoolDomain")) == 1
    outputs = cfn["Outputs"]
    assert outputs["InboxUrl"]["Export"]["Name"] == f"{PREFIX}-InboxUrl"


def test_the_app_is_deployed_under_inbox_with_its_config(inbox_cfn: dict[str, Any], synthesized: Any) -> None:
    from infra.capabilities.inbox import dist_dir

    (deployment,) = [v for v in inbox_cfn["Resources"].values() if v["Type"] == "Custom::CDKBucketDeployment"]
    props = deployment["Properties"]
    assert props["DestinationBucketKeyPrefix"] == "inbox/" and props["Prune"] is False
    assert "DistributionId" not in props  # no invalidation (its grant would need Resource '*')
    assert len(props["SourceObjectKeys"]) == 2  # the app (or its placeholder) and config.json
    assert synthesized.stack.inbox.placeholder is not (dist_dir() / "index.html").is_file()


def _mini_inbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dist: Path) -> Any:
    """The Inbox construct alone in a small stack (a user pool and a REST API stand in for `Api`)."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_apigateway as apigw
    from aws_cdk import aws_cognito as cognito
    from aws_cdk.assertions import Annotations

    from infra.capabilities import inbox
    from infra.config import TeamConfig

    monkeypatch.setattr(inbox, "dist_dir", lambda: dist)
    stack = Stack(App(outdir=str(tmp_path / "out")), "Mini", env={"account": "123456789012", "region": "eu-west-1"})
    web_api = apigw.RestApi(stack, "Web", deploy_options=apigw.StageOptions(stage_name="live"))
    web_api.root.add_method("GET", apigw.MockIntegration())
    api = SimpleNamespace(user_pool=cognito.UserPool(stack, "Pool"), web_api=web_api)
    built = inbox.Inbox(stack, "Inbox", config=TeamConfig(team="mini"), api=api)  # type: ignore[arg-type]
    return built, Annotations.from_stack(stack)


def test_a_missing_build_deploys_a_placeholder_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from aws_cdk.assertions import Match

    built, annotations = _mini_inbox(tmp_path, monkeypatch, tmp_path / "no-dist")
    assert built.placeholder is True
    annotations.has_warning("/Mini/Inbox", Match.string_like_regexp("inbox/dist is missing.*make inbox"))
    assert "inbox/dist is missing" in capsys.readouterr().err


def test_a_built_app_is_deployed_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html>")
    built, annotations = _mini_inbox(tmp_path, monkeypatch, dist)
    assert built.placeholder is False
    assert annotations.find_warning("*", Match.string_like_regexp("inbox/dist is missing")) == []
