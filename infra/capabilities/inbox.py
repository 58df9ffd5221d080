"""inbox: the web inbox deployed: `inbox/dist` in a private S3 bucket behind CloudFront, and its sign-in.

- The bucket: private (all public access blocked, bucket-owner objects), TLS only, SSE-S3, access logged.
  CloudFront reads it through an origin access control (the bucket policy names this distribution).
- The distribution: `/inbox/...` from the bucket (a viewer-request function serves `index.html` for the
  app's screens), `/api/*` to the people's REST API (Cognito-authorized, `infra/capabilities/api.py`),
  so the app and the API share one origin and need no CORS (an edge function on `/api/*` refuses another
  site's `Origin`, and drops the distribution's own: `API_ORIGIN_CHECK`). Nothing under `/api/*` is cached, and
  every request header (Authorization included) reaches the API. Security headers on every answer;
  content-hashed assets cached for a year; the page and its config at most 5 minutes at the edge
  (and revalidated by browsers), so a deployment shows within minutes without an invalidation
  (whose grant would need Resource '*'). Old assets are kept (no prune) for pages still cached.
  Standard logs to the log bucket.
- The sign-in: a Cognito domain on the operators' pool and a public app client (authorization code
  with PKCE, no client secret in the browser) whose only callback is the distribution's `/inbox/`.
  The app reads `/inbox/config.json` (deployed with it) for the pool, the client and the domain.

A nested stack of its own: CDK's BucketDeployment brings a provider Lambda and its AWS CLI layer,
which stay out of the service's template (where every function is a Baton handler).

`inbox/dist` is built by `make inbox`; when it is absent at synth, a placeholder page is deployed in its
place and the synth says so (a warning annotation, and a line on stderr)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from aws_cdk import Annotations, Duration, NestedStack, RemovalPolicy, Stack
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy

from baton.workflows.source_tree import source_tree
from infra.buckets import log_access, private_bucket

if TYPE_CHECKING:
    from pathlib import Path

    from constructs import Construct

    from infra.capabilities.api import Api
    from infra.config import TeamConfig

APP_PATH = "/inbox/"
PLACEHOLDER = (
    "<!doctype html><html lang=en><meta charset=utf-8><title>Baton inbox</title>"
    "<body><h1>The Baton inbox was not built</h1><p>This deployment was synthesized without "
    "<code>inbox/dist</code>. Run <code>make inbox</code>, then deploy again.</p></body></html>"
)
# The app's screens (no file extension) get the page; files are served as they are.
_ROUTER = """
function handler(event) {
  var request = event.request;
  var uri = request.uri;
  if (uri === '/' || uri === '/inbox') {
    return {statusCode: 302, statusDescription: 'Found', headers: {location: {value: '/inbox/'}}};
  }
  if (uri.indexOf('/inbox/assets/') !== 0 && uri.split('/').pop().indexOf('.') === -1) {
    request.uri = '/inbox/index.html';
  }
  return request;
}
"""
# `/api/*` through the distribution: a page's request is answered only from the distribution's own origin
# (its `Origin` is the viewer's `Host`), and that `Origin` is dropped before the API: the API knows its
# own name only, not the distribution's (which would be a cycle in CloudFormation), and checks the rest
# (baton/domain/origins.py). Requests without an `Origin` pass, as at the API.
API_ORIGIN_CHECK = """
function handler(event) {
  var request = event.request;
  var origin = request.headers.origin;
  if (origin) {
    if (origin.value.toLowerCase() !== 'https://' + request.headers.host.value.toLowerCase()) {
      return {statusCode: 403, statusDescription: 'Forbidden'};
    }
    delete request.headers.origin;
  }
  return request;
}
"""
_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self' https://*.amazoncognito.com https://cognito-idp.*.amazonaws.com; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def dist_dir() -> Path:
    return source_tree().root / "inbox" / "dist"


class Inbox(NestedStack):
    def __init__(self, scope: Construct, construct_id: str, *, config: TeamConfig, api: Api) -> None:
        super().__init__(scope, construct_id, description=f"Baton web inbox, team environment '{config.team}'")
        self.user_pool = api.user_pool
        self.log_bucket = private_bucket(
            self,
            "Logs",
            # CloudFront's standard logs are written with an ACL grant to the log delivery account.
            object_ownership=s3.ObjectOwnership.OBJECT_WRITER,
            expire_after_days=90,
            removal_policy=RemovalPolicy.RETAIN,
        )
        # S3's server access logs go to a bucket of their own: S3 delivers them under a bucket policy
        # (bucket-owner objects, no ACLs), while CloudFront's standard logs need the ACL grant above.
        self.access_log_bucket = private_bucket(
            self, "AccessLogs", expire_after_days=90, removal_policy=RemovalPolicy.RETAIN
        )
        # only the built app lives here
        self.bucket = private_bucket(self, "Site", removal_policy=RemovalPolicy.DESTROY)
        log_access(self.bucket, self.access_log_bucket, "s3/")
        log_access(self.log_bucket, self.access_log_bucket, "logs/")
        self.distribution = self._distribution(config, api)
        self.domain = cognito.UserPoolDomain(
            self,
            "SignIn",
            user_pool=api.user_pool,
            cognito_domain=cognito.CognitoDomainOptions(domain_prefix=f"{config.prefix}-{Stack.of(self).account}"),
        )
        app_url = f"https://{self.distribution.distribution_domain_name}{APP_PATH}"
        self.client = cognito.UserPoolClient(
            self,
            "InboxSignIn",
            user_pool=api.user_pool,
            user_pool_client_name=f"{config.prefix}-inbox-sign-in",
            generate_secret=False,  # a browser app keeps no secret: authorization code with PKCE
            auth_flows=cognito.AuthFlow(user_srp=False),
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(authorization_code_grant=True),
                scopes=[cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL, cognito.OAuthScope.PROFILE],
                callback_urls=[app_url],
                logout_urls=[app_url],
            ),
            supported_identity_providers=[cognito.UserPoolClientIdentityProvider.COGNITO],
            prevent_user_existence_errors=True,
            enable_token_revocation=True,
            id_token_validity=Duration.hours(1),
            access_token_validity=Duration.hours(1),
            refresh_token_validity=Duration.hours(12),
        )
        self.app_url = app_url
        self.placeholder = not (dist_dir() / "index.html").is_file()
        self.deployment = self._deploy(app_url)

    def _distribution(self, config: TeamConfig, api: Api) -> cloudfront.Distribution:
        headers = cloudfront.ResponseSecurityHeadersBehavior(
            content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                content_security_policy=_CSP, override=True
            ),
            content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
            frame_options=cloudfront.ResponseHeadersFrameOptions(
                frame_option=cloudfront.HeadersFrameOption.DENY, override=True
            ),
            referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True
            ),
            strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                access_control_max_age=Duration.days(365), include_subdomains=True, override=True
            ),
        )

        def policy(construct_id: str, cache_control: str) -> cloudfront.ResponseHeadersPolicy:
            return cloudfront.ResponseHeadersPolicy(
                self,
                construct_id,
                response_headers_policy_name=f"{config.prefix}-inbox-{construct_id.lower()}",
                security_headers_behavior=headers,
                custom_headers_behavior=cloudfront.ResponseCustomHeadersBehavior(
                    custom_headers=[
                        cloudfront.ResponseCustomHeader(header="Cache-Control", value=cache_control, override=True)
                    ]
                ),
            )

        site = origins.S3BucketOrigin.with_origin_access_control(self.bucket)
        router = cloudfront.Function(
            self,
            "Router",
            function_name=f"{config.prefix}-inbox-router",
            code=cloudfront.FunctionCode.from_inline(_ROUTER),
            runtime=cloudfront.FunctionRuntime.JS_2_0,
        )
        api_origin_check = cloudfront.Function(
            self,
            "ApiOriginCheck",
            function_name=f"{config.prefix}-inbox-api-origin",
            code=cloudfront.FunctionCode.from_inline(API_ORIGIN_CHECK),
            runtime=cloudfront.FunctionRuntime.JS_2_0,
        )
        return cloudfront.Distribution(
            self,
            "Distribution",
            comment=f"Baton web inbox ({config.team})",
            default_behavior=cloudfront.BehaviorOptions(
                origin=site,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy(
                    self,
                    "PageCache",
                    cache_policy_name=f"{config.prefix}-inbox-page",
                    min_ttl=Duration.seconds(0),
                    default_ttl=Duration.seconds(60),
                    max_ttl=Duration.minutes(5),
                    enable_accept_encoding_gzip=True,
                    enable_accept_encoding_brotli=True,
                ),
                response_headers_policy=policy("Page", "no-cache"),
                function_associations=[
                    cloudfront.FunctionAssociation(
                        function=router, event_type=cloudfront.FunctionEventType.VIEWER_REQUEST
                    )
                ],
            ),
            additional_behaviors={
                "/inbox/assets/*": cloudfront.BehaviorOptions(
                    origin=site,
                    viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                    cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                    response_headers_policy=policy("Assets", "public, max-age=31536000, immutable"),
                ),
                "/api/*": cloudfront.BehaviorOptions(
                    origin=origins.RestApiOrigin(api.web_api),
                    viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                    allowed_methods=cloudfront.AllowedMethods.ALLOW_ALL,
                    cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                    # with caching off this managed policy forwards every viewer header, Authorization too
                    origin_request_policy=cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
                    response_headers_policy=policy("Api", "no-store"),
                    function_associations=[
                        cloudfront.FunctionAssociation(
                            function=api_origin_check, event_type=cloudfront.FunctionEventType.VIEWER_REQUEST
                        )
                    ],
                ),
            },
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
            enable_logging=True,
            log_bucket=self.log_bucket,
            log_file_prefix="cloudfront/",
        )

    def _deploy(self, app_url: str) -> s3deploy.BucketDeployment:
        if self.placeholder:
            message = (
                f"inbox/dist is missing ({dist_dir()}): deploying a placeholder page at {APP_PATH}; "
                "run `make inbox` before deploying the inbox"
            )
            Annotations.of(self).add_warning_v2("baton:inbox-placeholder", message)
            sys.stderr.write(f"warning: {message}\n")
            app = s3deploy.Source.data("index.html", PLACEHOLDER)
        else:
            app = s3deploy.Source.asset(str(dist_dir()))
        stack = Stack.of(self)
        settings = s3deploy.Source.json_data(
            "config.json",
            {
                "region": stack.region,
                "user_pool_id": self.user_pool.user_pool_id,
                "client_id": self.client.user_pool_client_id,
                "sign_in_url": self.domain.base_url(),
                "redirect_uri": app_url,
                "api_url": "/api",
            },
        )
        return s3deploy.BucketDeployment(
            self,
            "App",
            sources=[app, settings],
            destination_bucket=self.bucket,
            destination_key_prefix=APP_PATH.strip("/") + "/",
            prune=False,
            memory_limit=512,
        )
