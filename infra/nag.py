"""cdk-nag (v3) AwsSolutions checks through CDK's policy-validation API, and the acknowledgements.

Every acknowledgement names the rule (or the rule and finding, `AwsSolutions-IAM5[Resource::*]`) and
gives its reason; `acknowledgements(scope)` lists them all (tests and docs read it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_cdk import Acknowledgment, Validations
from cdk_nag import AwsSolutionsChecks

if TYPE_CHECKING:
    from collections.abc import Iterator

    from constructs import IConstruct


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    if len(reason) < 20:
        raise ValueError(f"acknowledging {rule_id} needs a real reason, got {reason!r}")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule_id, reason=reason))


def add_checks(app: IConstruct) -> AwsSolutionsChecks:
    """Register AwsSolutions as a validation plugin: synth fails on any unacknowledged finding."""
    checks = AwsSolutionsChecks(app, verbose=True)
    Validations.of(app).add_plugins(checks)
    return checks


@dataclass(frozen=True)
class Finding:
    rule: str
    description: str
    paths: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.rule}: {self.description}\n    " + "\n    ".join(self.paths)


def findings(scope: IConstruct) -> list[Finding]:
    """Unacknowledged AwsSolutions findings of a construct tree (what the plugin reports at synth)."""
    report: Any = AwsSolutionsChecks(verbose=True).validate_scope(scope)
    out: list[Finding] = []
    for violation in report.violations:
        paths = tuple(str(r.construct_path) for r in violation.violating_resources)
        out.append(Finding(rule=str(violation.rule_name), description=str(violation.description), paths=paths))
    return out


@dataclass(frozen=True)
class Acknowledged:
    path: str
    rule: str
    reason: str


def acknowledgements(scope: IConstruct) -> Iterator[Acknowledged]:
    key = Validations.ACKNOWLEDGED_RULES_METADATA_KEY
    for construct in scope.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == key and entry.data:
                for rule, reason in dict(entry.data).items():
                    yield Acknowledged(construct.node.path, rule.split("::", 1)[-1], str(reason))
