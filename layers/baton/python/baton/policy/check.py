"""What `baton policy check` proves beyond parsing: a call the team says must be asked is never allowed.

The must-ask analysis is exhaustive over the context, not sampled: for each listed call, the policy decides it
under every combination of the context values a policy can read (`risk` low/medium/high, `granted`
true/false, `hour` 0..23, `weekday` 1..7: 1,008 decisions; `session` and `run` as the call gives them and as
each string the policy names) and the first combination it allows is reported with the deciding rule. A
context attribute no rule reads cannot change the outcome, so it is not varied (most policies read only
`risk` and `granted`: 6 decisions). What it does not cover: argument values, agents, teams and tools other
than the listed calls'. Pure: the policy and the calls in, the verdict out."""

from __future__ import annotations

import itertools
import json
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import cedarpy
from pydantic import Field

from baton.contracts.base import Contract

if TYPE_CHECKING:
    from collections.abc import Iterator

    from baton.policy.cases import MustAskCall
    from baton.policy.engine import Policy

RISKS = ("low", "medium", "high")
HOURS = tuple(range(24))
WEEKDAYS = tuple(range(1, 8))  # ISO: 1 is Monday
_A_MONDAY = datetime(2026, 11, 30, tzinfo=UTC)
CONTEXT_ATTRIBUTES = ("risk", "granted", "hour", "weekday", "session", "run")


class CallContext(Contract):
    """One context a call was decided under (hour and weekday UTC, as a rule reads them)."""

    risk: Literal["low", "medium", "high"]
    granted: bool
    hour: int
    weekday: int
    session: str
    run: str


class MustAskViolation(Contract):
    """A must-ask call the policy allows: the first context that allows it, and the rule that did."""

    call: str = Field(description="The must-ask entry's name.")
    rule: str | None
    reason: str | None
    context: CallContext


class MustAskVerdict(Contract):
    """The analysis of every must-ask call: how many decisions it took, what it varied, what it found."""

    calls: int
    decisions: int
    varied: list[str]
    violations: list[MustAskViolation]

    @property
    def ok(self) -> bool:
        return not self.violations


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from _nodes(child)


def _strings(ast: Any) -> set[str]:
    """Every string the policy names: literals, and each `like` pattern with its `*` as nothing."""
    found: set[str] = set()
    for node in _nodes(ast):
        if isinstance(node, dict) and isinstance(node.get("Value"), str):
            found.add(node["Value"])
        if isinstance(node, dict) and isinstance(node.get("like"), dict):
            pattern = node["like"].get("pattern", [])
            found.add("".join(p["Literal"] for p in pattern if isinstance(p, dict) and "Literal" in p))
    return found


def _ast(policy: Policy) -> Any:
    return json.loads(cedarpy.policies_to_json_str(policy.text))


def reads_the_clock(policy: Policy) -> bool:
    """Whether a rule reads the hour or weekday: a query without `at` is then decided by the clock."""
    return bool(_context_reads(_ast(policy)) & {"hour", "weekday"})


def _context_reads(ast: Any) -> set[str]:
    """The context attributes the policy reads; all of them when it reads the context as a whole."""
    context = {"Var": "context"}
    reads: set[str] = set()
    whole = sum(1 for node in _nodes(ast) if node == context)
    for node in _nodes(ast):
        for op in (".", "has"):
            if isinstance(node, dict) and isinstance(node.get(op), dict) and node[op].get("left") == context:
                reads.add(str(node[op].get("attr")))
                whole -= 1
    return set(CONTEXT_ATTRIBUTES) if whole > 0 else reads & set(CONTEXT_ATTRIBUTES)


def _contexts(call: MustAskCall, reads: set[str], strings: set[str]) -> Iterator[CallContext]:
    q = call.query
    at = datetime.fromisoformat(q.at).astimezone(UTC) if q.at else datetime.now(UTC)
    values: dict[str, tuple[Any, ...]] = {
        "risk": RISKS if "risk" in reads else (q.risk,),
        "granted": (False, True) if "granted" in reads else (q.granted,),
        "hour": HOURS if "hour" in reads else (at.hour,),
        "weekday": WEEKDAYS if "weekday" in reads else (at.isoweekday(),),
        "session": (q.session, *sorted(strings - {q.session})) if "session" in reads else (q.session,),
        "run": (q.run_id, *sorted(strings - {q.run_id})) if "run" in reads else (q.run_id,),
    }
    for combination in itertools.product(*values.values()):
        yield CallContext.model_validate(dict(zip(values, combination, strict=True)))


def must_ask(policy: Policy, calls: list[MustAskCall]) -> MustAskVerdict:
    """Decide each call under every context that can matter; name the first one that allows it."""
    ast = _ast(policy)
    reads, strings = _context_reads(ast), _strings(ast)
    decisions = 0
    violations: list[MustAskViolation] = []
    for call in calls:
        for ctx in _contexts(call, reads, strings):
            at = (_A_MONDAY + timedelta(days=ctx.weekday - 1, hours=ctx.hour)).isoformat()
            query = call.query.model_copy(
                update={"risk": ctx.risk, "granted": ctx.granted, "session": ctx.session, "run_id": ctx.run, "at": at}
            )
            decision = policy.decide(query)
            decisions += 1
            if decision.outcome == "allow":
                violations.append(
                    MustAskViolation(call=call.name, rule=decision.rule, reason=decision.reason, context=ctx)
                )
                break
    varied = [a for a in CONTEXT_ATTRIBUTES if a in reads]
    return MustAskVerdict(calls=len(calls), decisions=decisions, varied=varied, violations=violations)


def with_rule_ids(text: str, problems: list[str]) -> list[str]:
    """The engine's problems with Cedar's own rule names (`policy0`) as the rules' `@id`, one line each."""
    try:
        static = json.loads(cedarpy.policies_to_json_str(text)).get("staticPolicies", {})
    except (ValueError, RuntimeError):  # it does not parse: the problem says where, there are no rules
        static = {}
    ids = {cedar_id: (body.get("annotations") or {}).get("id") or cedar_id for cedar_id, body in static.items()}
    named = [re.sub(r"\bpolicy\d+\b", lambda m: ids.get(m.group(0), m.group(0)), p) for p in problems]
    return [" ".join(p.split()) for p in named]
