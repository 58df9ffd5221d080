"""email_links: the `email` channel as per-recipient mail with signed answer links (baton/channels/email).

Built only when `-c email_sender=<SES identity>` is set (infra/stack.py); without it the channel stays
the SNS email subscription of before, with no links. With it:

- the link key: a generated Secrets Manager secret; the `notify_email` Lambda signs with it, the API
  Lambda checks with it (each may only read this one secret);
- `notify_email` may `ses:SendEmail` only from the configured sender (its address and its domain's
  identity, with the `ses:FromAddress` condition), and is told the recipients, the links' base URL (the
  people's API) and the web inbox's URL;
- `GET` and `POST /answer/{link}` on the people's API to the API Lambda, with no IAM or Cognito auth:
  the signed, expiring, single-use link is the credential, and the API Lambda serves nothing else
  there (baton/api/app.py treats only `/answer/` as public).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.nag import acknowledge

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_cdk import aws_lambda as lambda_

    from infra.capabilities.api import Api
    from infra.config import TeamConfig

ANSWER_METHODS = ("GET", "POST")


def sender_identities(stack: Stack, sender: str) -> list[str]:
    """The SES identity ARNs a send from `sender` is authorized on: the address and its domain."""
    domain = sender.rpartition("@")[2]
    names = [sender, domain] if domain and domain != sender else [sender]
    return [stack.format_arn(service="ses", resource="identity", resource_name=name) for name in names]


class EmailLinks(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TeamConfig,
        api: Api,
        functions: Mapping[str, lambda_.Function],
        roles: Mapping[str, iam.Role],
        inbox_url: str,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.key = secretsmanager.Secret(
            self,
            "LinkKey",
            secret_name=f"{config.prefix}/email-link-key",
            description=f"{config.prefix}: signs the answer links in Baton's mail (HMAC-SHA256)",
            generate_secret_string=secretsmanager.SecretStringGenerator(password_length=64, exclude_punctuation=True),
        )
        acknowledge(
            self.key,
            "AwsSolutions-SMG4",
            "The link key signs answer links that live at most a few days; rotating it would break every link "
            "already mailed, so it is replaced by hand (a new secret value) when it must change",
        )
        mailer, api_fn = functions["notify_email"], functions["api"]
        recipients = ",".join(config.emails)
        for role in (roles["notify_email"], roles["api"]):
            self.key.grant_read(role)
        roles["notify_email"].add_to_principal_policy(
            iam.PolicyStatement(
                actions=["ses:SendEmail"],
                resources=sender_identities(stack, config.email_sender),
                conditions={"StringEquals": {"ses:FromAddress": config.email_sender}},
            )
        )
        mailer.add_environment("BATON_EMAIL_SENDER", config.email_sender)
        mailer.add_environment("BATON_EMAIL_LINK_BASE_URL", api.web_api.url)
        mailer.add_environment("BATON_INBOX_URL", inbox_url)
        for fn in (mailer, api_fn):
            fn.add_environment("BATON_EMAIL_RECIPIENTS", recipients)
            fn.add_environment("BATON_EMAIL_LINK_SECRET_ARN", self.key.secret_arn)
        resource = api.web_api.root.add_resource("answer").add_resource("{link}")
        integration = apigw.LambdaIntegration(api_fn, proxy=True, allow_test_invoke=False)
        self.methods = [
            resource.add_method(method, integration, authorization_type=apigw.AuthorizationType.NONE)
            for method in ANSWER_METHODS
        ]
        for method in self.methods:
            acknowledge(
                method,
                "AwsSolutions-APIG4",
                "An email answer link is opened from a mail client by a person with no AWS or Cognito session: "
                "the signed, expiring, single-use link is the credential, checked by the API Lambda",
            )
            acknowledge(
                method,
                "AwsSolutions-COG4",
                "An email answer link carries its own credential (an HMAC-signed, expiring, single-use link "
                "bound to one recipient and one question); a Cognito sign-in would defeat answering from mail",
            )
