"""One policy, loaded once and checked before it is used, deciding one call at a time (cedarpy).

How a Cedar policy set says allow, deny or ask:
- a satisfied `forbid` denies (Cedar's own rule: forbid wins); its `@reason` is what the model sees;
- a satisfied `permit` allows, unless it is annotated `@ask`: then a person is asked, by the approvers,
  quorum and deadline its `@approvers`, `@quorum`, `@timeout` (seconds) and `@tier` name, with the deadline
  ladder its `@remind_after`, `@escalate_after` (seconds) and `@escalate_to` (notification channels, as a
  pause's `escalate_to`) name; of several satisfied permits, any `@ask` one wins (asking is the safer);
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
from typing import TYPE_CHECKING, Any, get_args

import cedarpy

from baton.contracts.policy import AskSpec, PolicyDecision, PolicyMode, PolicyQuery
from baton.domain.approval import MAX_APPROVERS
from baton.domain.fields import MAX_TIMEOUT_SECONDS
from baton.domain.ladder import Channel
from baton.policy.schema import SCHEMA_JSON

# parsed once: parsing dominates a decision's cost (cedarpy's PolicySet and Schema handles)
SCHEMA = cedarpy.Schema.from_json_str(SCHEMA_JSON)

if TYPE_CHECKING:
    from collections.abc import Mapping

ASK = "ask"
LADDER = ("remind_after", "escalate_after", "escalate_to")  # the ladder steps an @ask rule may name
ASKED = ("approvers", "quorum", "timeout", *LADDER)  # what only an @ask permit may name
ANNOTATIONS = frozenset({"id", "reason", "ask", "tier", *ASKED})
CHANNELS = get_args(Channel)
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
        approvers = _names(a.get("approvers", ""))
        quorum = int(a["quorum"]) if "quorum" in a else None
        timeout = int(a["timeout"]) if "timeout" in a else None
        return AskSpec(
            approvers=approvers,
            quorum=quorum,
            timeout_seconds=timeout,
            tier=a.get("tier") or None,
            remind_after=int(a["remind_after"]) if "remind_after" in a else None,
            escalate_after=int(a["escalate_after"]) if "escalate_after" in a else None,
            escalate_to=_names(a.get("escalate_to", "")),
        )


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
    asked = [k for k in ASKED if k in rule.annotations]
    if (asked or ASK in rule.annotations) and rule.effect != "permit":
        problems.append(f"{where}: @ask and its approvers, quorum, timeout and ladder belong on a permit rule")
    for key in ("quorum", "timeout"):
        value = rule.annotations.get(key)
        if value is not None and not (value.isdigit() and int(value) >= 1):
            problems.append(f"{where}: @{key} must be a whole number >= 1, not {value!r}")
    approvers = set(_names(rule.annotations.get("approvers", "")))
    if len(approvers) > MAX_APPROVERS:  # the approval it would open could never be stored
        problems.append(f"{where}: @approvers names {len(approvers)}; at most {MAX_APPROVERS}")
    if ASK not in rule.annotations and any(k in asked for k in ("approvers", "quorum", "timeout")):
        problems.append(f"{where}: @approvers, @quorum and @timeout need @ask on the same rule")
    if ASK not in rule.annotations and any(k in asked for k in LADDER):
        problems.append(f"{where}: @remind_after, @escalate_after and @escalate_to need @ask on the same rule")
    return problems + _ladder_problems(rule, where)


def _ladder_problems(rule: Rule, where: str) -> list[str]:
    """The ladder a rule names, checked as a pause's own ladder is (`baton.domain.ladder.Ladder`); a step at
    or after the rule's own @timeout is known now and refused (a request's deadline is known only later)."""
    a, problems = rule.annotations, []
    for key in ("remind_after", "escalate_after"):
        value = a.get(key)
        if value is not None and not (value.isdigit() and 1 <= int(value) <= MAX_TIMEOUT_SECONDS):
            problems.append(
                f"{where}: @{key} must be a whole number of seconds, 1 to {MAX_TIMEOUT_SECONDS}, not {value!r}"
            )
    if ("escalate_to" in a) != ("escalate_after" in a):
        problems.append(f"{where}: @escalate_after and @escalate_to go together (when, and the channels)")
    channels = _names(a.get("escalate_to", ""))
    if "escalate_to" in a and not channels:
        problems.append(f"{where}: @escalate_to names no channel (one of {', '.join(CHANNELS)})")
    unknown = [c for c in channels if c not in CHANNELS]
    if unknown:
        problems.append(f"{where}: @escalate_to names {', '.join(unknown)}; channels are {', '.join(CHANNELS)}")
    if len(set(channels)) != len(channels):
        problems.append(f"{where}: @escalate_to names a channel twice")
    steps = {k: int(a[k]) for k in ("remind_after", "escalate_after") if a.get(k, "").isdigit() and int(a[k]) >= 1}
    if "remind_after" in steps and "escalate_after" in steps and steps["escalate_after"] <= steps["remind_after"]:
        problems.append(f"{where}: @escalate_after must come after @remind_after")
    timeout = int(a["timeout"]) if a.get("timeout", "").isdigit() else None
    problems += [
        f"{where}: @{k} ({seconds}s) must come before the rule's @timeout ({timeout}s)"
        for k, seconds in steps.items()
        if timeout is not None and seconds >= timeout
    ]
    return problems


def _names(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


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
