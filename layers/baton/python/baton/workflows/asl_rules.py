"""The deployment rules `baton check` applies to every state (issue 27, "deployed as tested"): what the
engine does in AWS that the local stack never shows. Each finding has a code:

- C300: a Lambda Task (`arn:aws:states:::lambda:invoke`, its `.waitForTaskToken` form, or a Lambda ARN as
  the Resource) that does not retry Lambda's transient errors (LAMBDA_TRANSIENT_ERRORS: a throttle, a
  service fault) with backoff: for each of them, the first Retrier that matches it (by name or
  `States.ALL`) must allow MaxAttempts >= 2 with a BackoffRate > 1 (ASL's defaults, 3 and 2.0, count).
  Opt-out: the state's Comment holds `[no-lambda-retry: <why>]`, e.g. a Lambda whose second run is not
  idempotent (the review gate's merge start: a second merge build).
  A Retry on a `waitForTaskToken` park: a throttled invoke never ran the park, so the retry parks as the
  first call would have. A service fault may come after the park ran; the retry then carries a new token,
  and every park refuses to overwrite another parked token (`DynamoStore.put_wait`'s condition; the same
  token is an idempotent no-op: `Core.parked_again`), so that run fails as it did with no Retry. The diff
  start may start a second diff build (read-only; the later build's record replaces the first's).
- C301: a long call with no Catch: a Lambda Task (not a token wait) whose function may run longer than
  LONG_CALL_SECONDS (its FunctionSpec.timeout_seconds, found by its `${XFunctionArn}`, or the Task's own
  TimeoutSeconds) needs a Catch on `States.ALL` or `States.TaskFailed`: a model call that fails or times
  out must end in a state that says so, not in a bare Lambda error.
- C302: an execution name that may exceed EXECUTION_NAME_MAX (80) characters: a startExecution Task's
  `Name`, or its `Name.$` (a path, or `States.Format('...', args)`), measured with each argument at its
  longest: `$.run_id` at MAX_RUN_ID_LENGTH (every Baton state machine's input carries the run id as
  `run_id`), `$.input.<field>` at its input schema's `maxLength` (string), longest `enum` value, or the
  digits of its `maximum` (integer), and a path the state bounds itself with a Comment marker
  `[bound: <path> <= <integer or $.input.<field>>]` (the fix loop's counter, bounded by its Choice).
  Anything else cannot be bounded, and is reported.
- C303: a Choice rule that reads an optional input field without testing `IsPresent` first (a missing
  path fails the run with States.Runtime). A field is optional when the workflow has an input schema
  that neither requires it nor has a default for it (WORKFLOW_DEFAULTS, applied at POST /api/runs). Only
  `$.input.<field>` paths are judged: other paths are written by the machine's own states (ResultPath,
  ResultSelector), which this rule does not trace. A read is guarded by an `IsPresent: true` on the same
  path (or one it extends) earlier in the same `And`, or by an earlier rule of the same Choice that
  branches away on `IsPresent: false`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.domain.fields import MAX_RUN_ID_LENGTH
from baton.workflows.resources import FUNCTIONS, STATE_MACHINES, WORKFLOW_DEFAULTS

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

Finding = tuple[str, str, str]  # (state path, code, message), as baton.workflows.gate_checks returns them

LAMBDA_TRANSIENT_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
# The Retrier Baton's own Lambda Tasks carry (statemachines/*.asl.json): three more tries, 1 s, 2 s, 4 s apart.
LAMBDA_RETRIER: Mapping[str, Any] = {
    "ErrorEquals": list(LAMBDA_TRANSIENT_ERRORS),
    "IntervalSeconds": 1,
    "MaxAttempts": 3,
    "BackoffRate": 2,
}
LONG_CALL_SECONDS = 60
EXECUTION_NAME_MAX = 80  # StartExecution's name
RUN_ID_PATH = "$.run_id"

_LAMBDA_RESOURCE = re.compile(r"^arn:[^:]+:states:::lambda:invoke(\.waitForTaskToken)?$|^arn:[^:]+:lambda:")
_FUNCTION_PLACEHOLDER = re.compile(r"^\$\{([A-Za-z0-9_]+)\}$")
_NO_RETRY = re.compile(r"\[no-lambda-retry:\s*([^\]]*\S)\s*\]")
_BOUND = re.compile(r"\[bound:\s*(\$[^\s\]]+)\s*<=\s*([^\s\]]+)\s*\]")
_FORMAT = re.compile(r"^States\.Format\(\s*'((?:[^'\\]|\\.)*)'\s*(?:,(.*))?\)$", re.DOTALL)
_TIMEOUTS = {spec.substitution: spec.timeout_seconds for spec in FUNCTIONS}
_WORKFLOW_OF_FILE = {file: workflow for workflow, file in STATE_MACHINES.items()}


@dataclass(frozen=True)
class RuleContext:
    """What the rules know of a definition beyond its states: its input schema and the defaults its runs
    get (both may be absent: a file no workflow registers, or a workflow with no schema)."""

    input_schema: Mapping[str, Any] | None = None
    defaults: Mapping[str, object] | None = None

    @classmethod
    def for_file(cls, file: str, input_schema: Mapping[str, Any] | None) -> RuleContext:
        workflow = _WORKFLOW_OF_FILE.get(file)
        return cls(input_schema=input_schema, defaults=WORKFLOW_DEFAULTS.get(workflow or "", {}))


def rule_findings(path: str, state: Mapping[str, Any], context: RuleContext) -> list[Finding]:
    return [
        *retry_findings(path, state),
        *long_call_findings(path, state),
        *execution_name_findings(path, state, context),
        *choice_findings(path, state, context),
    ]


# ---- C300: retries ------------------------------------------------------------------------------------
def is_lambda_task(state: Mapping[str, Any]) -> bool:
    return state.get("Type") == "Task" and bool(_LAMBDA_RESOURCE.match(str(state.get("Resource", ""))))


def _is_token_wait(state: Mapping[str, Any]) -> bool:
    return str(state.get("Resource", "")).endswith(".waitForTaskToken")


def _retries_with_backoff(retrier: Mapping[str, Any]) -> bool:
    attempts = retrier.get("MaxAttempts", 3)
    backoff = retrier.get("BackoffRate", 2.0)
    return isinstance(attempts, int) and attempts >= 2 and isinstance(backoff, int | float) and backoff > 1


def unretried_errors(state: Mapping[str, Any]) -> list[str]:
    """Lambda's transient errors this Task does not retry with backoff (the first matching Retrier decides)."""
    retriers = [r for r in state.get("Retry", []) or [] if isinstance(r, dict)]
    missing = []
    for error in LAMBDA_TRANSIENT_ERRORS:
        first = next((r for r in retriers if {error, "States.ALL"} & set(r.get("ErrorEquals", []))), None)
        if first is None or not _retries_with_backoff(first):
            missing.append(error)
    return missing


def retry_findings(path: str, state: Mapping[str, Any]) -> list[Finding]:
    if not is_lambda_task(state) or _NO_RETRY.search(str(state.get("Comment", ""))):
        return []
    missing = unretried_errors(state)
    if not missing:
        return []
    return [
        (
            path,
            "C300",
            f"Lambda Task does not retry {', '.join(missing)} with backoff (MaxAttempts >= 2, BackoffRate > 1): "
            "one throttle would fail the run; add a Retry, or say why not in its Comment: [no-lambda-retry: <why>]",
        )
    ]


# ---- C301: a long call has a Catch --------------------------------------------------------------------
def _function_timeout(state: Mapping[str, Any]) -> int | None:
    params = state.get("Parameters") or state.get("Arguments") or {}
    name = params.get("FunctionName") if isinstance(params, dict) else None
    found = _FUNCTION_PLACEHOLDER.match(name) if isinstance(name, str) else None
    return _TIMEOUTS.get(found.group(1)) if found else None


def long_call_findings(path: str, state: Mapping[str, Any]) -> list[Finding]:
    if not is_lambda_task(state) or _is_token_wait(state):
        return []
    own = state.get("TimeoutSeconds")
    limits = [t for t in (_function_timeout(state), own) if isinstance(t, int) and not isinstance(t, bool)]
    longest = max(limits, default=0)
    if longest <= LONG_CALL_SECONDS:
        return []
    caught = {e for c in state.get("Catch", []) or [] if isinstance(c, dict) for e in c.get("ErrorEquals", [])}
    if caught & {"States.ALL", "States.TaskFailed"}:
        return []
    return [
        (
            path,
            "C301",
            f"a call that may run {longest} s (over {LONG_CALL_SECONDS} s: a model call) has no Catch on States.ALL "
            "or States.TaskFailed: its failure would end the run as a bare Lambda error; catch it into a state "
            "that says what failed",
        )
    ]


# ---- C302: execution names fit ------------------------------------------------------------------------
def _longest_value(path: str, state: Mapping[str, Any], context: RuleContext) -> int | None:
    """The longest text `path` can stand for in a States.Format argument, or None when unbounded."""
    if path == RUN_ID_PATH:
        return MAX_RUN_ID_LENGTH
    for bounded, bound in _BOUND.findall(str(state.get("Comment", ""))):
        if bounded == path:
            return len(bound) if bound.isdigit() else _longest_value(bound, {}, context)
    schema = context.input_schema
    if not path.startswith("$.input.") or schema is None:
        return None
    field = (schema.get("properties") or {}).get(path.removeprefix("$.input."))
    return _longest_input(field) if isinstance(field, dict) else None


def _longest_input(field: Mapping[str, Any]) -> int | None:
    """The longest text an input field's schema allows: its longest enum value, its maxLength (a string),
    or the digits of its bounds (an integer); None when the schema does not bound it."""
    if isinstance(field.get("enum"), list) and field["enum"]:
        return max(len(v if isinstance(v, str) else json.dumps(v)) for v in field["enum"])
    if field.get("type") == "string" and isinstance(field.get("maxLength"), int):
        return int(field["maxLength"])
    if field.get("type") == "integer" and isinstance(field.get("maximum"), int):
        low = field.get("minimum")
        return max(len(str(field["maximum"])), len(str(low)) if isinstance(low, int) else 0)
    return None


def _name_length(expression: str, state: Mapping[str, Any], context: RuleContext) -> tuple[int | None, str]:
    """(the longest name `expression` can build, or None) and, when None, what cannot be bounded."""
    formatted = _FORMAT.match(expression.strip())
    if formatted is None:
        if expression.startswith("$") and "(" not in expression:
            longest = _longest_value(expression, state, context)
            return longest, expression
        return None, expression
    template = re.sub(r"\\(.)", r"\1", formatted.group(1))
    args = [a.strip() for a in (formatted.group(2) or "").split(",") if a.strip()]
    total = len(template) - 2 * template.count("{}")
    for arg in args:
        longest = _longest_value(arg, state, context)
        if longest is None:
            return None, arg
        total += longest
    return total, ""


def execution_name_findings(path: str, state: Mapping[str, Any], context: RuleContext) -> list[Finding]:
    resource = str(state.get("Resource", ""))
    params = state.get("Parameters") or state.get("Arguments") or {}
    if state.get("Type") != "Task" or ":states:startExecution" not in resource or not isinstance(params, dict):
        return []
    literal, built = params.get("Name"), params.get("Name.$")
    if isinstance(literal, str) and len(literal) > EXECUTION_NAME_MAX:
        return [(path, "C302", f"execution name '{literal}' is longer than {EXECUTION_NAME_MAX} characters")]
    if not isinstance(built, str):
        return []
    longest, unbounded = _name_length(built, state, context)
    if longest is None:
        return [
            (
                path,
                "C302",
                f"cannot bound the execution name {built!r}: {unbounded!r} has no known longest value (the run id, "
                "an input field with maxLength/maximum, or a Comment marker [bound: <path> <= <bound>])",
            )
        ]
    if longest > EXECUTION_NAME_MAX:
        return [
            (
                path,
                "C302",
                f"execution name {built!r} can be {longest} characters (run ids of {MAX_RUN_ID_LENGTH}), over the "
                f"{EXECUTION_NAME_MAX} StartExecution allows",
            )
        ]
    return []


# ---- C303: optional input fields are tested for presence first ----------------------------------------
def _input_field(path: str) -> str | None:
    if not path.startswith("$.input."):
        return None
    return re.split(r"[.\[]", path.removeprefix("$.input."), maxsplit=1)[0] or None


def _is_optional(field: str, context: RuleContext) -> bool:
    schema = context.input_schema
    if schema is None:
        return False  # no schema: what the input holds is not described, so nothing is judged
    return field not in (schema.get("required") or []) and field not in (context.defaults or {})


def _covers(guard: str, path: str) -> bool:
    """Does a presence test on `guard` make `path` present? (the same path, or one that `path` extends is
    not enough: `$.input.a` present says nothing of `$.input.a.b`; a test on `$.input.a.b` covers `$.input.a`)."""
    return guard == path or guard.startswith((path + ".", path + "["))


def _reads(rule: Mapping[str, Any]) -> Iterator[str]:
    """The paths a comparison reads: its Variable (unless it is the IsPresent test) and its *Path operand."""
    variable = rule.get("Variable")
    if isinstance(variable, str) and "IsPresent" not in rule:
        yield variable
    for key, value in rule.items():
        if key.endswith("Path") and isinstance(value, str):
            yield value


def _unguarded(rule: Mapping[str, Any], present: list[str]) -> Iterator[str]:
    if "And" in rule:
        seen = list(present)
        for inner in rule["And"]:
            yield from _unguarded(inner, seen)
            if inner.get("IsPresent") is True and isinstance(inner.get("Variable"), str):
                seen.append(inner["Variable"])
        return
    for key in ("Or", "Not"):
        inner_rules = rule.get(key)
        for inner in inner_rules if isinstance(inner_rules, list) else [inner_rules] if inner_rules else []:
            yield from _unguarded(inner, present)
    for read in _reads(rule):
        if not any(_covers(guard, read) for guard in present):
            yield read


def choice_findings(path: str, state: Mapping[str, Any], context: RuleContext) -> list[Finding]:
    if state.get("Type") != "Choice":
        return []
    findings: list[Finding] = []
    present: list[str] = []  # paths an earlier rule proved present (it branched away when absent)
    for rule in state.get("Choices", []) or []:
        if not isinstance(rule, dict):
            continue
        for read in _unguarded(rule, present):
            field = _input_field(read)
            if field is not None and _is_optional(field, context):
                findings.append(
                    (
                        path,
                        "C303",
                        f"reads {read}, but input.{field} is optional (the input schema does not require it and it "
                        "has no default): a run without it fails here (States.Runtime); test IsPresent first "
                        "(And: [{Variable, IsPresent: true}, ...])",
                    )
                )
        if rule.get("IsPresent") is False and isinstance(rule.get("Variable"), str):
            present.append(rule["Variable"])
    return findings
