"""One policy, loaded once and checked before it is used, deciding one call at a time (cedarpy).

How a Cedar policy set says allow, deny or ask:
- a satisfied `forbid` denies (Cedar's own rule: forbid wins); its `@reason` is what the model sees;
- a satisfied `permit` allows, unless it is annotated `@ask`: then a person is asked, by the approvers,
  quorum and deadline its `@approvers`, `@quorum`, `@timeout` (seconds) and `@tier` name; of several
  satisfied permits, any `@ask` one wins (asking is the safer of the two);
- no satisfied rule, or a rule that failed to evaluate: a person is asked (a policy never allows by accident).
Every rule carries an `@id`, recorded with the policy's version in the decision log.

The request, in Baton's schema (`baton.policy.schema`): principal `Agent::"<agent>"` in its `Team` and
`Workflow`; action `Action::"call_tool"` or `Action::"pass_gate"`; resource `ToolCall::"call"` in
`Tool::"<tool>"` (or `Gate::"<action>"`) carrying the call's arguments as tags (strings as they are, other
values as compact JSON); context `risk`, `run`, `session`, `granted`, `hour` and `weekday` (UTC)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

import cedarpy

from baton.contracts.policy import AskSpec, PolicyDecision, PolicyMode, PolicyQuery
from baton.domain.approval import MAX_APPROVERS
from baton.policy.schema import SCHEMA_JSON

# parsed once: parsing dominates a decision's cost (cedarpy's PolicySet and Schema handles)
SCHEMA = cedarpy.Schema.from_json_str(SCHEMA_JSON)

if TYPE_CHECKING:
    from collections.abc import Mapping

ASK = "ask"
ANNOTATIONS = frozenset({"id", "reason", "ask", "approvers", "quorum", "timeout", "tier"})
NO_RULE = "no rule matched: a person decides"


class PolicyError(ValueError):
    """A policy that cannot be taken: it does not parse, does not validate against Baton's schema, or
    annotates a rule wrongly. `problems` lists each, with the rule's `@id` where there is one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Rule:
    """One Cedar policy of the set: its effect and annotations (`cedar_id` is Cedar's own `policyN`)."""

    cedar_id: str
    rule_id: str
    effect: str
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def asks(self) -> bool:
        return self.effect == "permit" and ASK in self.annotations

    def ask_spec(self) -> AskSpec:
        a = self.annotations
        approvers = [p.strip() for p in a.get("approvers", "").split(",") if p.strip()]
        quorum = int(a["quorum"]) if "quorum" in a else None
        timeout = int(a["timeout"]) if "timeout" in a else None
        return AskSpec(approvers=approvers, quorum=quorum, timeout_seconds=timeout, tier=a.get("tier") or None)


def policy_version(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Policy:
    text: str
    version: str
    rules: Mapping[str, Rule]
    mode: PolicyMode = "enforce"

    @classmethod
    def load(cls, text: str, *, mode: PolicyMode = "enforce", version: str | None = None) -> Policy:
        """Parse and validate `text`; a `PolicyError` names every problem, and nothing is taken."""
        try:
            parsed = json.loads(cedarpy.policies_to_json_str(text))
        except (ValueError, RuntimeError) as err:  # cedarpy raises ValueError with Cedar's parse message
            raise PolicyError([f"does not parse: {err}"]) from err
        static = parsed.get("staticPolicies", {})
        if parsed.get("templates"):
            raise PolicyError(["templates are not supported: write each rule as a static policy"])
        validated = cedarpy.validate_policies(text, SCHEMA)
        problems = [f"does not validate against Baton's schema: {e}" for e in validated.errors]
        rules: dict[str, Rule] = {}
        seen: set[str] = set()
        for cedar_id, body in static.items():
            annotations = {k: ("" if v is None else str(v)) for k, v in (body.get("annotations") or {}).items()}
            rule = Rule(cedar_id, annotations.get("id") or cedar_id, body["effect"], annotations)
            problems += _annotation_problems(rule, seen)
            seen.add(rule.rule_id)
            rules[cedar_id] = rule
        if problems:
            raise PolicyError(problems)
        return cls(text=text, version=version or policy_version(text), rules=rules, mode=mode)

    def decide(self, query: PolicyQuery) -> PolicyDecision:
        """Cedar's answer to `query`, as allow, deny or ask, with the rule that decided."""
        request, entities = cedar_request(query)
        result = cedarpy.is_authorized(request, self._parsed, entities, schema=SCHEMA)
        matched = [self.rules[p] for p in result.diagnostics.reasons if p in self.rules]
        if result.decision == cedarpy.Decision.Deny and matched:
            forbid = next((r for r in matched if r.effect == "forbid"), matched[0])
            reason = forbid.annotations.get("reason") or f"denied by policy rule {forbid.rule_id}"
            return self._decision("deny", forbid, reason)
        if result.diagnostics.errors:  # a rule that failed to evaluate may have been a forbid: never allow
            errors = "; ".join(str(e) for e in result.diagnostics.errors)
            return self._decision(ASK, None, f"a rule failed to evaluate ({errors}): a person decides")
        if result.decision != cedarpy.Decision.Allow or not matched:
            return self._decision(ASK, None, NO_RULE)
        asking = next((r for r in matched if r.asks), None)
        if asking is not None:
            reason = asking.annotations.get("reason") or f"rule {asking.rule_id} requires approval"
            return self._decision(ASK, asking, reason, ask=asking.ask_spec())
        allow = matched[0]
        return self._decision("allow", allow, allow.annotations.get("reason") or f"allowed by rule {allow.rule_id}")

    @cached_property
    def _parsed(self) -> cedarpy.PolicySet:
        return cedarpy.PolicySet.from_str(self.text)

    def _decision(self, outcome: str, rule: Rule | None, reason: str, ask: AskSpec | None = None) -> PolicyDecision:
        return PolicyDecision.model_validate(
            {
                "outcome": outcome,
                "rule": rule.rule_id if rule else None,
                "reason": reason,
                "policy_version": self.version,
                "mode": self.mode,
                "ask": ask if outcome == ASK else None,
            }
        )


def _annotation_problems(rule: Rule, seen: set[str]) -> list[str]:
    where = f"rule {rule.rule_id}"
    known = ", ".join(sorted(ANNOTATIONS))
    problems = [f"{where}: unknown annotation @{k} (known: {known})" for k in rule.annotations if k not in ANNOTATIONS]
    if rule.rule_id in seen:
        problems.append(f"{where}: @id is used twice")
    if "id" not in rule.annotations:
        problems.append(f"{where}: every rule needs an @id (the decision log names the rule that decided)")
    asked = ASK in rule.annotations or any(k in rule.annotations for k in ("approvers", "quorum", "timeout"))
    if asked and rule.effect != "permit":
        problems.append(f"{where}: @ask and its approvers, quorum and timeout belong on a permit rule")
    for key in ("quorum", "timeout"):
        value = rule.annotations.get(key)
        if value is not None and not (value.isdigit() and int(value) >= 1):
            problems.append(f"{where}: @{key} must be a whole number >= 1, not {value!r}")
    approvers = {p.strip() for p in rule.annotations.get("approvers", "").split(",") if p.strip()}
    if len(approvers) > MAX_APPROVERS:  # the approval it would open could never be stored
        problems.append(f"{where}: @approvers names {len(approvers)}; at most {MAX_APPROVERS}")
    if ASK not in rule.annotations and any(k in rule.annotations for k in ("approvers", "quorum", "timeout")):
        problems.append(f"{where}: @approvers, @quorum and @timeout need @ask on the same rule")
    return problems


def _tag(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def cedar_request(query: PolicyQuery) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The Cedar request and entities for `query` (Baton's schema: `baton.policy.schema`)."""
    at = datetime.fromisoformat(query.at) if query.at else datetime.now(UTC)
    parents = [{"type": "Team", "id": query.team}] if query.team else []
    parents += [{"type": "Workflow", "id": query.workflow}] if query.workflow else []
    principal = {"uid": {"type": "Agent", "id": query.agent}, "attrs": {}, "parents": parents}
    tags = {k: _tag(v) for k, v in query.arguments.items()}
    if query.action == "call_tool":
        resource_uid = {"type": "ToolCall", "id": "call"}
        resource = {"uid": resource_uid, "attrs": {}, "parents": [{"type": "Tool", "id": query.target}], "tags": tags}
    else:
        resource_uid = {"type": "Gate", "id": query.target}
        resource = {"uid": resource_uid, "attrs": {}, "parents": [], "tags": tags}
    request = {
        "principal": f'Agent::"{_escape(query.agent)}"',
        "action": f'Action::"{query.action}"',
        "resource": f'{resource_uid["type"]}::"{_escape(resource_uid["id"])}"',
        "context": {
            "risk": query.risk,
            "run": query.run_id,
            "session": query.session,
            "granted": query.granted,
            "hour": at.astimezone(UTC).hour,
            "weekday": at.astimezone(UTC).isoweekday(),
        },
    }
    return request, [principal, resource]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
