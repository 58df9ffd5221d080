"""web_push: the VAPID private key of Web Push (issue 32, item 3; baton/channels/push/) as a Secrets
Manager secret, made EMPTY: the operator fills it once with `baton push init-vapid --secret-id <arn>`
(which generates a P-256 key and stores its PEM), or with the aws CLI. Until then push is off (`GET
/api/push/key` is a 404 that says so). The functions that push, the API (a claim reassigned) and
gate_deadline (a ladder's escalation), may `secretsmanager:GetSecretValue` on this one secret only. The
stack exports its ARN (`<prefix>-VapidSecretArn`).

A notification's one-tap answer: `POST /api/push/answer` on the people's API with no Cognito auth (the
service worker has no token: the inbox keeps it in the page); the signed, expiring, single-use credential
in the body is the authority, checked by the API Lambda (baton/channels/push/answers.py PushAnswers). No CORS:
the inbox and the API share the distribution's origin (`/api/*` is a behaviour of the inbox's CloudFront
distribution, infra/capabilities/inbox.py), so the worker's request is same-origin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.nag import acknowledge

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_cdk import aws_lambda as lambda_

    from infra.capabilities.api import Api

PUSH_FUNCTIONS = ("api", "gate_deadline")
PUSH_ANSWER_RESOURCE = "api/push/answer"  # baton.contracts.push.PUSH_ANSWER_PATH


class WebPushKey(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        prefix: str,
        functions: Mapping[str, lambda_.Function],
        roles: Mapping[str, iam.Role],
        api: Api,
    ) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret(
            self,
            "VapidKey",
            secret_name=f"{prefix}/vapid-private-key",
            description=f"{prefix}: the Web Push VAPID private key (PEM); fill with `baton push init-vapid`",
        )
        # Encrypted with the AWS managed key, as the email link key: only two functions read it, so a CMK
        # would add a key policy and cost for no narrower access (checkov CKV_AWS_149, baselined on purpose).
        # Empty: no generated value (a random password is no key); the operator stores the key.
        cfn = self.secret.node.default_child
        assert isinstance(cfn, secretsmanager.CfnSecret)
        cfn.add_property_deletion_override("GenerateSecretString")
        acknowledge(
            self.secret,
            "AwsSolutions-SMG4",
            "The VAPID key is bound to every browser's push subscription: rotating it silently would end them "
            "all, so it is replaced by hand (`baton push init-vapid`) and the browsers subscribe again",
        )
        for name in PUSH_FUNCTIONS:
            roles[name].add_to_principal_policy(
                iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[self.secret.secret_arn])
            )
            functions[name].add_environment("BATON_VAPID_SECRET_ID", self.secret.secret_arn)
        # Beside the Cognito-authorized `/api/{proxy+}`: API Gateway matches this explicit path first.
        answer = api.web_api.root.resource_for_path(PUSH_ANSWER_RESOURCE)
        self.answer_method = answer.add_method(
            "POST",
            apigw.LambdaIntegration(functions["api"], proxy=True, allow_test_invoke=False),
            authorization_type=apigw.AuthorizationType.NONE,
        )
        acknowledge(
            self.answer_method,
            "AwsSolutions-APIG4",
            "A notification's one-tap answer is sent by the inbox's service worker, which holds no Cognito token: "
            "the signed, expiring, single-use credential in the body is the authority, checked by the API Lambda",
        )
        acknowledge(
            self.answer_method,
            "AwsSolutions-COG4",
            "The one-tap credential is bound to one item, one answer and the operator the push was sent to, and "
            "expires within the hour; a Cognito sign-in would defeat answering from the notification",
        )
