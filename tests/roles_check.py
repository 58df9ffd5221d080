"""Calls against roles: every AWS call each function made in the integration and e2e suites (recorded by
tests/call_recorder.py under BATON_CALLS_DIR) checked against that function's role in the
synthesized template, and the calls that send a gate's task token also against a user's own state
machine granted with `BatonGate.grant_resume` (a small user stack synthesized here).

    python -m tests.roles_check <calls-dir>      # make test runs it right after pytest

A denied call fails, named with its function, action, resource and code line; granted actions no
recorded call used are printed (least privilege), not failed. The IAM evaluation is deliberately simple:
Allow and Deny statements' Action and Resource (with `*`/`?` wildcards; Conditions are not evaluated),
the template's `Ref`/`Fn::GetAtt`/`Fn::Join`/`Fn::Select`/`Fn::Split`/`Fn::ImportValue` resolved to
deployed ARNs for one fixed account and region (the local stack's, so local ARNs keep theirs).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tests.call_recorder import RecordedCall

if TYPE_CHECKING:
    from collections.abc import Callable

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
from baton.workflows.resources import STATE_MACHINES

ACCOUNT: Final = "123456789012"  # the local stack's (moto's) account and region
REGION: Final = "us-east-1"
TEAM: Final = "ci"
PREFIX: Final = f"baton-{TEAM}"
ROLES_CONTEXT: Final = {"slack_channel": "C0BATONCI", "aws:cdk:bundling-stacks": []}  # no asset is staged
USER_MACHINE: Final = "UserFlow"  # the user stack's one state machine, whose gates' tokens Baton's functions send
MACHINE: Final = "AWS::StepFunctions::StateMachine"
REVIEW_GATE: Final = "review_gate"  # its tokens stay in Baton's own machine, even for a user's BatonGate.review
TOKEN_CALLS: Final = frozenset({"SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat"})
TRANSACT_ACTIONS: Final = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
# What a Lambda needs that the runtime itself uses (never a botocore call in a handler): not "unused".
RUNTIME_PREFIXES: Final = ("logs:", "xray:")

# type -> (property holding the physical name, what Ref returns, the ARN pattern with {name})
_KINDS: Final[dict[str, tuple[str, str, str]]] = {
    "AWS::SNS::Topic": ("TopicName", "arn", "arn:aws:sns:{region}:{account}:{name}"),
    "AWS::Lambda::Function": ("FunctionName", "name", "arn:aws:lambda:{region}:{account}:function:{name}"),
    "AWS::StepFunctions::StateMachine": (
        "StateMachineName",
        "arn",
        "arn:aws:states:{region}:{account}:stateMachine:{name}",
    ),
    "AWS::DynamoDB::Table": ("TableName", "name", "arn:aws:dynamodb:{region}:{account}:table/{name}"),
    "AWS::IAM::Role": ("RoleName", "name", "arn:aws:iam::{account}:role/{name}"),
    "AWS::KMS::Key": ("", "name", "arn:aws:kms:{region}:{account}:key/{name}"),
    "AWS::Logs::LogGroup": ("LogGroupName", "name", "arn:aws:logs:{region}:{account}:log-group:{name}:*"),
    "AWS::CodeBuild::Project": ("Name", "name", "arn:aws:codebuild:{region}:{account}:project/{name}"),
    "AWS::SecretsManager::Secret": ("Name", "arn", "arn:aws:secretsmanager:{region}:{account}:secret:{name}-AbCdEf"),
    "AWS::SQS::Queue": ("QueueName", "url", "arn:aws:sqs:{region}:{account}:{name}"),
    "AWS::S3::Bucket": ("BucketName", "name", "arn:aws:s3:::{name}"),
    "AWS::IAM::ManagedPolicy": ("ManagedPolicyName", "arn", "arn:aws:iam::{account}:policy/{name}"),
}
_PSEUDO: Final = {
    "AWS::Partition": "aws",
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT,
    "AWS::URLSuffix": "amazonaws.com",
    "AWS::NoValue": "",
}


class Unresolvable(ValueError):
    pass


@dataclass(frozen=True)
class Statement:
    effect: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    origin: str  # the policy's logical id (and template), for the least-privilege listing


@dataclass(frozen=True)
class Requirement:
    """One IAM permission a recorded call needs; `user_machine`: needed on a user's own state machine."""

    action: str
    resource: str
    user_machine: bool = False


@dataclass
class Verdict:
    denied: list[tuple[RecordedCall, Requirement]] = field(default_factory=list)
    checked: int = 0
    unresolved_tokens: list[RecordedCall] = field(default_factory=list)
    used: set[tuple[str, Statement, str, str]] = field(default_factory=set)  # (role, statement, action, resource)


class StackTemplate:
    """A synthesized CloudFormation template with its intrinsics resolved to deployed values."""

    def __init__(self, cfn: dict[str, Any], *, name: str, exports: dict[str, Any] | None = None) -> None:
        self.name = name
        self.resources: dict[str, dict[str, Any]] = cfn.get("Resources", {})
        self.imports = exports or {}  # export name -> its value (another template's output), resolved there
        self.exports: dict[str, Any] = {
            o["Export"]["Name"]: o["Value"] for o in cfn.get("Outputs", {}).values() if "Export" in o
        }

    def resolved_exports(self) -> dict[str, Any]:
        """Export name -> value, for the exports that resolve (a nested stack's outputs do not)."""
        resolved = {}
        for name, value in self.exports.items():
            try:
                resolved[name] = self.resolve(value)
            except Unresolvable:
                continue
        return resolved

    def physical_name(self, logical_id: str) -> str:
        resource = self.resources[logical_id]
        kind = _KINDS.get(resource["Type"])
        prop = kind[0] if kind else ""
        named = resource.get("Properties", {}).get(prop) if prop else None
        return str(self.resolve(named)) if named is not None else logical_id

    def arn(self, logical_id: str) -> str:
        kind = _KINDS.get(self.resources[logical_id]["Type"])
        pattern = kind[2] if kind else "arn:aws:unknown:{region}:{account}:{name}"
        return pattern.format(region=REGION, account=ACCOUNT, name=self.physical_name(logical_id))

    def ref(self, logical_id: str) -> str:
        if logical_id in _PSEUDO:
            return _PSEUDO[logical_id]
        if logical_id not in self.resources:
            raise Unresolvable(f"Ref {logical_id}")
        kind = _KINDS.get(self.resources[logical_id]["Type"])
        returns = kind[1] if kind else "name"
        if returns == "arn":
            return self.arn(logical_id)
        if returns == "url":
            return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{self.physical_name(logical_id)}"
        return self.physical_name(logical_id)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str | int | float | bool):
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict) or len(value) != 1:
            raise Unresolvable(json.dumps(value)[:200])
        ((fn, arg),) = value.items()
        intrinsic = _INTRINSICS.get(fn)
        if intrinsic is None:
            raise Unresolvable(fn)
        return intrinsic(self, arg)

    def get_att(self, arg: Any) -> str:
        logical_id, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
        if attribute == "Arn":
            return self.arn(logical_id)
        if attribute in ("Name", "TopicName", "QueueName"):
            return self.physical_name(logical_id)
        raise Unresolvable(f"GetAtt {logical_id}.{attribute}")

    def import_value(self, arg: Any) -> Any:
        name = self.resolve(arg)
        if name not in self.imports:
            raise Unresolvable(f"ImportValue {name}")
        return self.imports[name]

    def sub(self, arg: Any) -> str:
        text, variables = (arg, {}) if isinstance(arg, str) else arg
        return re.sub(r"\$\{([^}!]+)\}", lambda m: self._substituted(m[1], variables), text)

    def _substituted(self, name: str, variables: dict[str, Any]) -> str:
        if name in variables:
            return str(self.resolve(variables[name]))
        if "." in name:
            return str(self.resolve({"Fn::GetAtt": name.split(".", 1)}))
        return self.ref(name)

    def statements_by_role(self) -> dict[str, list[Statement]]:
        """Role name -> the statements of every policy attached to it in this template."""
        found: dict[str, list[Statement]] = defaultdict(list)
        for logical_id, resource in self.resources.items():
            props = resource.get("Properties", {})
            if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
                statements = self._statements(props.get("PolicyDocument", {}), logical_id)
                for role in props.get("Roles", []):
                    found[str(self.resolve(role))] += statements
            elif resource["Type"] == "AWS::IAM::Role":
                role = self.physical_name(logical_id)
                for inline in props.get("Policies", []):
                    found[role] += self._statements(inline.get("PolicyDocument", {}), logical_id)
                for arn in props.get("ManagedPolicyArns", []):
                    managed = self._managed_policy(arn)
                    if managed is not None:
                        found[role] += self._statements(
                            self.resources[managed]["Properties"]["PolicyDocument"], managed
                        )
        return found

    def _managed_policy(self, arn: Any) -> str | None:
        """The template's own managed policy behind an attached ARN (AWS-managed ones are not evaluated)."""
        if isinstance(arn, dict) and "Ref" in arn and arn["Ref"] in self.resources:
            return str(arn["Ref"])
        return None

    def _statements(self, document: dict[str, Any], origin: str) -> list[Statement]:
        out = []
        for raw in document.get("Statement", []):
            if "Action" not in raw or "Resource" not in raw:  # NotAction / NotResource: not evaluated here
                continue
            actions = raw["Action"]
            try:
                resources = self.resolve(raw["Resource"])
            except Unresolvable as err:  # matches nothing: a call that needs it is reported denied
                resources = f"<unresolved {err}>"
            out.append(
                Statement(
                    effect=raw.get("Effect", "Allow"),
                    actions=tuple(actions if isinstance(actions, list) else [actions]),
                    resources=tuple(str(r) for r in (resources if isinstance(resources, list) else [resources])),
                    origin=f"{self.name}:{origin}",
                )
            )
        return out

    def role_of_function(self) -> dict[str, str]:
        """Function (FunctionSpec name, without the team prefix) -> its role's name."""
        roles = {}
        for logical_id, resource in self.resources.items():
            if resource["Type"] == "AWS::Lambda::Function":
                name = self.physical_name(logical_id).removeprefix(f"{PREFIX}-")
                role_arn = str(self.resolve(resource["Properties"]["Role"]))
                roles[name] = role_arn.rsplit("/", 1)[1]
        return roles

    def logical_id_named(self, type_: str, physical: str) -> str | None:
        for logical_id, resource in self.resources.items():
            if resource["Type"] == type_ and self.physical_name(logical_id) == physical:
                return logical_id
        return None


_INTRINSICS: Final[dict[str, Callable[[StackTemplate, Any], Any]]] = {
    "Ref": lambda t, arg: t.ref(arg),
    "Fn::GetAtt": StackTemplate.get_att,
    "Fn::Join": lambda t, arg: str(arg[0]).join(str(t.resolve(p)) for p in arg[1]),
    "Fn::Select": lambda t, arg: t.resolve(arg[1])[int(t.resolve(arg[0]))],
    "Fn::Split": lambda t, arg: str(t.resolve(arg[1])).split(arg[0]),
    "Fn::ImportValue": StackTemplate.import_value,
    "Fn::Sub": StackTemplate.sub,
}


@cache
def _pattern(glob: str, *, case_sensitive: bool) -> re.Pattern[str]:
    flags = re.DOTALL if case_sensitive else re.DOTALL | re.IGNORECASE
    return re.compile(re.escape(glob).replace(r"\*", ".*").replace(r"\?", "."), flags)


def matches(glob: str, value: str, *, case_sensitive: bool = True) -> bool:
    """IAM's wildcards: `*` any run of characters (across `:` and `/`), `?` one character; actions
    compare without case, resources with it."""
    return _pattern(glob, case_sensitive=case_sensitive).fullmatch(value) is not None


def allows(statements: list[Statement], action: str, resource: str) -> tuple[bool, list[Statement]]:
    """(allowed, the Allow statements that grant it): an explicit Deny wins."""
    granting, denied = [], False
    for s in statements:
        if any(matches(a, action, case_sensitive=False) for a in s.actions) and any(
            matches(r, resource) for r in s.resources
        ):
            if s.effect == "Deny":
                denied = True
            else:
                granting.append(s)
    return bool(granting) and not denied, granting


class Deployment:
    """Baton's template, and optionally a user's stack whose state machine's gates Baton resumes."""

    def __init__(self, baton: StackTemplate, user: StackTemplate | None = None) -> None:
        self.baton = baton
        self.user = user
        self.roles = baton.role_of_function()
        self.statements: dict[str, list[Statement]] = defaultdict(list)
        for role, found in baton.statements_by_role().items():
            self.statements[role] += found
        if user is not None:
            for role, found in user.statements_by_role().items():
                self.statements[role] += found
        machines = [] if user is None else [k for k, v in user.resources.items() if v["Type"] == MACHINE]
        self.user_machine_arn = user.arn(machines[0]) if user is not None and len(machines) == 1 else None

    def deployed(self, type_: str, local_name: str) -> str:
        """The deployed ARN of a local resource: `<local prefix>-<suffix>` is `<PREFIX>-<suffix>`; the
        table is the stack's one table."""
        if type_ == "AWS::DynamoDB::Table":
            tables = [k for k, v in self.baton.resources.items() if v["Type"] == type_]
            if len(tables) == 1:
                return self.baton.arn(tables[0])
        suffixes = [*STATE_MACHINES, "notifications", "table", "merge"]  # merge: the merge builds' project
        name = local_name.rsplit(":", 1)[-1]
        for suffix in sorted(suffixes, key=len, reverse=True):
            if name.endswith(f"-{suffix}"):
                name = f"{PREFIX}-{suffix}"
                break
        logical_id = self.baton.logical_id_named(type_, name)
        if logical_id is None:
            raise Unresolvable(f"no {type_} named {name} (local {local_name}) in the template")
        return self.baton.arn(logical_id)

    def topic_key(self, topic_arn: str) -> str | None:
        for logical_id, resource in self.baton.resources.items():
            if resource["Type"] == "AWS::SNS::Topic" and self.baton.arn(logical_id) == topic_arn:
                key = resource["Properties"].get("KmsMasterKeyId")
                return str(self.baton.resolve(key)) if key is not None else None
        return None

    def requirements(self, call: RecordedCall) -> list[Requirement]:
        """The IAM permissions `call` needs in the deployed stack (an empty list: nothing to check)."""
        rule = {
            "dynamodb": self._dynamodb,
            "sns": self._sns,
            "states": self._states,
            "lambda": self._lambda,
            "codebuild": self._codebuild,
            "ssm": self._ssm,
        }.get(call.service)
        if rule is None:
            raise Unresolvable(f"no rule for {call.service}:{call.operation}: add one to tests/roles_check.py")
        return rule(call)

    def _dynamodb(self, call: RecordedCall) -> list[Requirement]:
        if call.items:  # a transaction needs each item's own action; a batch its own on each table
            return [
                Requirement(
                    f"dynamodb:{call.operation if kind == 'RequestItems' else TRANSACT_ACTIONS[kind]}",
                    self.deployed("AWS::DynamoDB::Table", table),
                )
                for kind, table in call.items
            ]
        table = self.deployed("AWS::DynamoDB::Table", call.resources["TableName"])
        index = call.resources.get("IndexName")
        return [Requirement(f"dynamodb:{call.operation}", f"{table}/index/{index}" if index else table)]

    def _sns(self, call: RecordedCall) -> list[Requirement]:
        topic = self.deployed("AWS::SNS::Topic", call.resources.get("TopicArn") or call.resources["TargetArn"])
        out = [Requirement("sns:Publish", topic)]
        key = self.topic_key(topic)
        if key is not None:  # publishing to an encrypted topic uses its key
            out += [Requirement("kms:GenerateDataKey", key), Requirement("kms:Decrypt", key)]
        return out

    def _lambda(self, call: RecordedCall) -> list[Requirement]:
        name = f"{PREFIX}-{call.resources['FunctionName'].rsplit(':', 1)[-1]}"
        return [Requirement("lambda:InvokeFunction", self.deployed("AWS::Lambda::Function", name))]

    def _codebuild(self, call: RecordedCall) -> list[Requirement]:
        name = call.resources["projectName"].rsplit("/", 1)[-1]
        return [Requirement(f"codebuild:{call.operation}", self.deployed("AWS::CodeBuild::Project", name))]

    def _ssm(self, call: RecordedCall) -> list[Requirement]:
        name = call.resources["Name"].lstrip("/")
        return [Requirement(f"ssm:{call.operation}", f"arn:aws:ssm:{REGION}:{ACCOUNT}:parameter/{name}")]

    def _states(self, call: RecordedCall) -> list[Requirement]:
        op, res = call.operation, call.resources
        if op in TOKEN_CALLS:
            machine = res.get("token_machine", "")
            if not machine:
                return []  # a token moto never issued (a test's made-up token): no machine to check
            workflow = _workflow(machine)
            out = [Requirement(f"states:{op}", self.deployed(MACHINE, machine))]
            if workflow != REVIEW_GATE and self.user_machine_arn is not None:
                out.append(Requirement(f"states:{op}", self.user_machine_arn, user_machine=True))
            return out
        if "executionArn" in res:
            machine = res["executionArn"].rsplit(":", 1)[0].replace(":execution:", ":stateMachine:")
            deployed = self.deployed(MACHINE, machine)
            out = [Requirement(f"states:{op}", _execution(deployed))]
            if op == "DescribeExecution" and _workflow(machine) != REVIEW_GATE and self.user_machine_arn:
                # a gate release whose task is gone asks how the run's execution is doing (Core.release_gate)
                out.append(Requirement(f"states:{op}", _execution(self.user_machine_arn), user_machine=True))
            return out
        machine = res["stateMachineArn"]
        return [Requirement(f"states:{op}", self.deployed(MACHINE, machine))]

    def check(self, calls: list[RecordedCall]) -> Verdict:
        verdict = Verdict()
        senders = {c.function for c in calls if c.operation in TOKEN_CALLS}
        for call in calls:
            if call.operation in TOKEN_CALLS and not call.resources.get("token_machine"):
                verdict.unresolved_tokens.append(call)
            role = self.roles.get(call.function)
            for need in self.requirements(call):
                if need.user_machine and call.function not in senders:
                    continue
                verdict.checked += 1
                ok, granting = allows(self.statements.get(role or "", []), need.action, need.resource)
                if not ok:
                    verdict.denied.append((call, need))
                for s in granting:
                    for action in s.actions:
                        for resource in s.resources:
                            if matches(action, need.action, case_sensitive=False) and matches(resource, need.resource):
                                verdict.used.add((role or "", s, action, resource))
        return verdict

    def unused(self, verdict: Verdict, functions: set[str]) -> list[str]:
        """Per exercised function, the granted actions that no recorded call of it used."""
        used = {(role, action) for role, _, action, _ in verdict.used}
        lines = []
        for function in sorted(functions):
            role = self.roles.get(function, "")
            granted = {a for s in self.statements.get(role, []) if s.effect == "Allow" for a in s.actions}
            idle = sorted(a for a in granted if (role, a) not in used and not a.startswith(RUNTIME_PREFIXES))
            if idle:
                lines.append(f"  {function}: {', '.join(idle)}")
        return lines


def _workflow(machine_arn: str) -> str:
    name = machine_arn.rsplit(":", 1)[-1]
    return next((w for w in sorted(STATE_MACHINES, key=len, reverse=True) if name.endswith(f"-{w}")), name)


def _execution(machine_arn: str) -> str:
    return machine_arn.replace(":stateMachine:", ":execution:") + ":an-execution"


def load_calls(directory: Path) -> list[RecordedCall]:
    calls = {}
    for path in sorted(directory.glob("calls-*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                call = RecordedCall.model_validate_json(line)
                calls[call.model_dump_json()] = call
    return list(calls.values())


def format_denied(denied: list[tuple[RecordedCall, Requirement]]) -> list[str]:
    """One line per denied permission of a function, with every code line that needed it."""
    lines: dict[tuple[str, Requirement], set[str]] = defaultdict(set)
    for call, need in denied:
        lines[(call.function, need)].add(f"{call.operation} at {call.line}")
    out = []
    for (function, need), where in sorted(lines.items(), key=lambda item: (item[0][0], item[0][1].action)):
        user = " (a user's own state machine, BatonGate.grant_resume)" if need.user_machine else ""
        out.append(f"DENIED {function}: {need.action} on {need.resource}{user}")
        out += [f"    {line}" for line in sorted(where)]
    return out


def baton_template() -> dict[str, Any]:
    """Baton's template as the e2e suite runs it: the infra tests' context (every channel, the merge
    repository, the companion model) plus the Slack app posting to a channel (tests/e2e/test_slack_e2e.py),
    whose notify_slack reads the table."""
    from infra.synth import synthesize
    from tests.infra.conftest import CONTEXT

    outdir = Path(tempfile.mkdtemp(prefix="baton-roles-")) / "cdk.out"
    result = synthesize(TEAM, outdir, context={**CONTEXT, **ROLES_CONTEXT}, nag=False)
    synthesized: dict[str, Any] = json.loads(result.template_path.read_text())
    return synthesized


def user_template() -> dict[str, Any]:
    """A user's stack: one state machine with an ask, an interrupt and an await gate, granted with
    `BatonGate.grant_resume` from the team's exports (the deployed way)."""
    from aws_cdk import App, Duration, Stack
    from aws_cdk import aws_stepfunctions as sfn

    from infra.gate import BatonGate, BatonRef

    app = App(outdir=tempfile.mkdtemp(prefix="baton-roles-user-"))
    stack = Stack(app, "UserStack")
    baton = BatonRef.from_exports(stack, "Baton", team=TEAM)
    hour = Duration.hours(1)
    chain = (
        BatonGate.ask(stack, "Approve", baton=baton, node="approve", prompt="Ship it?", timeout=hour)
        .next(BatonGate.interrupt(stack, "Edit", baton=baton, node="edit", prompt="Fix the plan", timeout=hour))
        .next(BatonGate.await_answers(stack, "Sync", baton=baton, gate="sync", timeout=hour))
    )
    machine = sfn.StateMachine(stack, USER_MACHINE, definition_body=sfn.DefinitionBody.from_chainable(chain))
    BatonGate.grant_resume(machine, baton=baton)
    template: dict[str, Any] = app.synth().get_stack_by_name("UserStack").template
    return template


def deployment() -> Deployment:
    baton = StackTemplate(baton_template(), name="baton")
    return Deployment(baton, StackTemplate(user_template(), name="user", exports=baton.resolved_exports()))


def main(argv: list[str]) -> int:
    directory = Path(argv[0]) if argv else None
    if directory is None or not directory.is_dir():
        print("usage: python -m tests.roles_check <calls-dir> (the BATON_CALLS_DIR of a test run)", file=sys.stderr)
        return 2
    calls = load_calls(directory)
    if not calls:
        print(f"roles check: no calls recorded under {directory}: was BATON_CALLS_DIR set for the tests?")
        return 1
    deployed = deployment()
    verdict = deployed.check(calls)
    functions = {c.function for c in calls}
    print(f"roles check: {len(calls)} distinct calls of {len(functions)} functions, {verdict.checked} permissions")
    unused = deployed.unused(verdict, functions)
    if unused:
        print(f"granted but not used by any recorded call ({len(unused)}; least privilege, not a failure):")
        print("\n".join(unused))
    never = sorted(set(deployed.roles) - functions)
    if never:
        print(f"functions with no recorded AWS call (none made, or not run by the dispatcher): {', '.join(never)}")
    if verdict.unresolved_tokens:
        print(f"token calls with a token moto never issued (not checked): {len(verdict.unresolved_tokens)}")
    if verdict.denied:
        print("\n".join(format_denied(verdict.denied)))
        print(f"roles check: {len(verdict.denied)} denied calls: the deployed roles would refuse them")
        return 1
    print("roles check: every recorded call is allowed by its function's deployed role")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
