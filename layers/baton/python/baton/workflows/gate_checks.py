"""Gate configurations checked before anything runs (`baton check`, `make test`), the way the seeds'
compilers refuse a bad workflow. Each finding has a code:

- C100: a review gate with nothing to merge (no `run_branch`, neither in its literal configuration nor
  required by the workflow's input schema when the configuration comes from the input).
- C101: a review gate's `review_url` names an output its `outputs` do not have.
- C240: a Task that posts async questions as a node that is itself a person's pause here (a blocking
  ask's or an interrupt's `node`, a review gate's `gate`): a human node IS the blocking question, and its
  questions would wait on the person they are meant to reach. Ask from the agent node before it. At run
  time the ask is refused too (`baton.services.questions`, 422 with reason `node_is_a_human_pause`).
- C241: an await gate without a positive timeout (`TimeoutSeconds` <= 0, or a literal
  `timeout_seconds` <= 0 in its payload).
- C242: an await gate whose `from` names a node that never asks in this workflow (Tasks post questions
  as other nodes, none as that one): it would release at once with no answers. A workflow in which no
  Task asks gets its questions from agents over the API, and is not judged; at run time the gate says
  so loudly either way (`baton.services.await_gates`: a warning on `await_started`).
- C250: a quorum (`approval` in a gate Task's Payload, at any depth) that can never be met or is not
  valid: `approvals` < 1, or more approvals than named approvers when only operators are named
  (`baton/domain/approval.py`). An `approval` taken from the input (`approval.$`) is checked at run time.
- C270: a quorum (`approval` or `approval.$`) in an await gate's payload: an await gate is released by
  its questions' answers and would ignore it (put the quorum on the questions: `ask_user_async`'s
  `approval`).
- C271: a quorum taken from the run's input (`approval.$: $.input.<field>`) that the workflow's input
  schema does not declare: a run started without it fails at the Task (States.Runtime: the path is
  missing); declare `<field>` (`{"type": ["object", "null"]}`) and default it (`workflows/resources.py`).
- C251: a pause's literal `ladder` (baton.domain.ladder) that would be refused when it parks: malformed,
  a step not before a literal timeout, or an ask's default that is not an object of answers.
- C260: a review gate's literal `ladder` whose `on_timeout` default could merge (or is no review action):
  a default may only be `request_changes` (baton.domain.ladder.REVIEW_DEFAULTS); its other ladder
  problems (a step not before the gate's timeout_seconds) are C251.
- C261: an await gate's literal `ladder` that its park would refuse: a `{"default": ...}` (an await gate
  has no answer of its own: its questions declare defaults, it takes "use_question_defaults"), or a step
  not before the gate's timeout.
- C245: a Baton parking Task (a task-token wait on one of Baton's gate functions, or any token wait whose
  payload has a literal `timeout_seconds`) whose literal `TimeoutSeconds` leaves no grace after it
  (< `timeout_seconds` + GRACE_SECONDS, baton.domain.deadline): Step Functions could time the task out
  as Baton delivers its answer at the deadline. Paths (`TimeoutSecondsPath`, `timeout_seconds.$`) are
  not judged.

Gates are found by what they call: a review gate is a `states:startExecution.sync:2` Task on
`${ReviewGateStateMachineArn}`; an await gate is a `waitForTaskToken` Task on `${AwaitGateFunctionArn}`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from baton.domain.approval import ApprovalPolicy
from baton.domain.deadline import GRACE_SECONDS, task_timeout_seconds
from baton.domain.gate_payloads import PAYLOAD_OF_FUNCTION
from baton.workflows.resources import FUNCTIONS

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

REVIEW_GATE_ARN = "${ReviewGateStateMachineArn}"
# Baton's gate Lambdas (a pause's park, timeout and merge handlers), as ASL names them: none of them asks.
_GATE_FUNCTIONS = frozenset(f"${{{spec.substitution}}}" for spec in FUNCTIONS if spec.name in PAYLOAD_OF_FUNCTION)
AWAIT_GATE_ARN = "${AwaitGateFunctionArn}"
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def task_payload(state: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Lambda payload a Task state passes (`Parameters` or `Arguments`), {} when it has none."""
    params = state.get("Parameters") or state.get("Arguments") or {}
    payload = params.get("Payload", {}) if isinstance(params, dict) else {}
    return payload if isinstance(payload, dict) else {}


def _is_review_gate(state: Mapping[str, Any]) -> bool:
    params = state.get("Parameters") or {}
    return (
        state.get("Type") == "Task"
        and str(state.get("Resource", "")).startswith("arn:aws:states:::states:startExecution")
        and isinstance(params, dict)
        and params.get("StateMachineArn") == REVIEW_GATE_ARN
    )


def is_await_gate(state: Mapping[str, Any]) -> bool:
    params = state.get("Parameters") or {}
    return (
        state.get("Type") == "Task"
        and str(state.get("Resource", "")).endswith(".waitForTaskToken")
        and isinstance(params, dict)
        and params.get("FunctionName") == AWAIT_GATE_ARN
    )


def asking_nodes(states: Iterator[tuple[str, Mapping[str, Any]]]) -> set[str]:
    """The nodes that post questions here: every Task whose payload names a literal `node` (a Baton
    Lambda asking as that node, or an agent's own Lambda)."""
    return {
        str(task_payload(state)["node"])
        for _, state in states
        if state.get("Type") == "Task" and isinstance(task_payload(state).get("node"), str)
    }


def _is_token_wait(state: Mapping[str, Any]) -> bool:
    return state.get("Type") == "Task" and str(state.get("Resource", "")).endswith(".waitForTaskToken")


def pause_nodes(states: Iterator[tuple[str, Mapping[str, Any]]]) -> dict[str, str]:
    """The nodes that are a person's pause here, each with the state that pauses: the literal `node` of
    a task-token wait (a blocking ask, an interrupt; an await gate names a `gate`, not a node) and the
    literal `gate` of a review gate."""
    found: dict[str, str] = {}
    for path, state in states:
        node = task_payload(state).get("node") if _is_token_wait(state) else None
        if _is_review_gate(state):
            config, _ = _review_config(state)
            node = config.get("gate") if config is not None else None
        if isinstance(node, str):
            found.setdefault(node, path)
    return found


def _is_gate_function(name: object) -> bool:
    """One of Baton's gate handlers: by its ASL placeholder (`${GateTimeoutFunctionArn}`), or in a
    deployed definition by its ARN or name (`...:function:<prefix>-gate_timeout`)."""
    if not isinstance(name, str):
        return False
    if name in _GATE_FUNCTIONS:
        return True
    tail = name.rsplit(":", 1)[-1]
    return any(tail == fn or tail.endswith(f"-{fn}") for fn in PAYLOAD_OF_FUNCTION)


def asks_as_node(state: Mapping[str, Any]) -> str | None:
    """The node a Task posts questions as: a Task that is no pause (an agent's Lambda, not one of Baton's
    gate handlers, which name a pause's node and ask nothing) with a literal `node` in its payload."""
    if state.get("Type") != "Task" or _is_token_wait(state) or _is_review_gate(state):
        return None
    params = state.get("Parameters") or state.get("Arguments") or {}
    if isinstance(params, dict) and _is_gate_function(params.get("FunctionName")):
        return None
    node = task_payload(state).get("node")
    return node if isinstance(node, str) else None


def question_node_findings(
    path: str, state: Mapping[str, Any], pauses: Mapping[str, str]
) -> list[tuple[str, str, str]]:
    """C240: a Task that posts questions as a node that is a person's pause here."""
    node = asks_as_node(state)
    if node is None or node not in pauses:
        return []
    return [
        (
            path,
            "C240",
            f"posts questions as node '{node}', which is itself a person's pause here ({pauses[node]}): a human "
            "node IS the blocking question; post async questions from the agent node before it",
        )
    ]


def _schema_requires(schema: Mapping[str, Any] | None, dotted: str) -> bool:
    """Does the input schema require the field at `dotted` (e.g. `review.run_branch`)?"""
    node: Any = schema
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in (node.get("required") or []):
            return False
        node = (node.get("properties") or {}).get(part)
    return True


def _review_config(state: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, str | None]:
    """(the literal configuration, or None) and (the input path it comes from, `$.input.x`, or None)."""
    given = (state.get("Parameters") or {}).get("Input") or {}
    if not isinstance(given, dict):
        return None, None
    if isinstance(given.get("input"), dict):
        return given["input"], None
    path = given.get("input.$")
    return None, str(path) if isinstance(path, str) else None


def review_findings(
    path: str, state: Mapping[str, Any], input_schema: Mapping[str, Any] | None
) -> list[tuple[str, str, str]]:
    if not _is_review_gate(state):
        return []
    config, from_input = _review_config(state)
    findings: list[tuple[str, str, str]] = []
    if config is not None:
        if not config.get("run_branch") and "run_branch.$" not in config:
            findings.append((path, "C100", "review gate with nothing to merge: its configuration has no run_branch"))
        findings.extend(_review_url_findings(path, config))
        findings.extend(_review_ladder_findings(path, config))
    elif from_input is not None and from_input.startswith("$.input."):
        field = from_input.removeprefix("$.input.")
        if not _schema_requires(input_schema, f"{field}.run_branch"):
            findings.append(
                (
                    path,
                    "C100",
                    f"review gate may have nothing to merge: its configuration comes from input.{field}, and the "
                    f"workflow's input schema does not require input.{field}.run_branch",
                )
            )
    return findings


def _review_ladder_findings(path: str, config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """C260 / C251: a review gate's literal ladder, as its configuration would refuse it at run time."""
    declared = config.get("ladder")
    if not isinstance(declared, dict):
        return []
    from baton.domain.ladder import AnswerCheck, Ladder
    from baton.errors import ValidationFailedError

    timeout = config.get("timeout_seconds", 86400)
    try:
        Ladder.model_validate(declared).check_for(
            timeout if isinstance(timeout, int) else None, answer_is=AnswerCheck(kind="review")
        )
    except (ValidationError, ValidationFailedError) as err:
        if isinstance(err, ValidationFailedError):
            code = "C260" if err.details.get("code") == "C260" else "C251"
            return [(path, code, f"the review gate's ladder would be refused: {err.message}")]
        return [(path, "C251", f"the review gate's ladder would be refused: {err.errors()[0]['msg']}")]
    return []


def _review_url_findings(path: str, config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    template = config.get("review_url")
    outputs = config.get("outputs", {})
    if not isinstance(template, str) or not isinstance(outputs, dict) or "outputs.$" in config:
        return []
    findings = []
    for name in _PLACEHOLDER.findall(template):
        dotted = name.strip()
        if not dotted.startswith("outputs."):
            continue
        node: Any = outputs
        for part in dotted.removeprefix("outputs.").split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None or isinstance(node, dict | list):
            findings.append((path, "C101", f"review_url names '{dotted}', which its outputs do not have"))
    return findings


def _approvals_in(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "approval":
                yield inner
            else:
                yield from _approvals_in(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _approvals_in(inner)


def _quorum_placement(
    path: str, state: Mapping[str, Any], input_schema: Mapping[str, Any] | None
) -> list[tuple[str, str, str]]:
    """C270 (a quorum on an await gate) and C271 (a quorum from an input field the schema lacks)."""
    payload = task_payload(state)
    given = [key for key in ("approval", "approval.$") if key in payload]
    if given and is_await_gate(state):
        return [
            (
                path,
                "C270",
                f"await gate with {given[0]!r}: it is released by its questions' answers and would ignore a quorum; "
                "put the approval on the questions (ask_user_async approval)",
            )
        ]
    source = payload.get("approval.$")
    if input_schema is None or not isinstance(source, str) or not source.startswith("$.input."):
        return []
    field = source.removeprefix("$.input.").split(".")[0]
    if field in (input_schema.get("properties") or {}):
        return []
    return [
        (
            path,
            "C271",
            f"the quorum comes from input.{field}, which the workflow's input schema does not declare: a run "
            f"started without it fails at this Task; declare input.{field} (object or null) and give it a default",
        )
    ]


def quorum_findings(
    path: str, state: Mapping[str, Any], input_schema: Mapping[str, Any] | None = None
) -> list[tuple[str, str, str]]:
    """C250: every literal quorum in a Task's Parameters/Arguments must be one that can be met; C270 and
    C271: where a quorum is given."""
    if state.get("Type") != "Task":
        return []
    findings: list[tuple[str, str, str]] = _quorum_placement(path, state, input_schema)
    for literal in _approvals_in(state.get("Parameters") or state.get("Arguments") or {}):
        try:
            ApprovalPolicy.model_validate(literal)
        except ValidationError as err:
            reasons = "; ".join(e["msg"].removeprefix("Value error, ") for e in err.errors())
            findings.append((path, "C250", f"approval {literal!r} is not a quorum that can be met: {reasons}"))
    return findings


def await_findings(path: str, state: Mapping[str, Any], asking: set[str]) -> list[tuple[str, str, str]]:
    if not is_await_gate(state):
        return []
    findings: list[tuple[str, str, str]] = []
    payload = task_payload(state)
    timeouts = [state.get("TimeoutSeconds"), payload.get("timeout_seconds")]
    literal = [t for t in timeouts if t is not None]
    has_path = "TimeoutSecondsPath" in state or "timeout_seconds.$" in payload
    if any(isinstance(t, bool) or not isinstance(t, int) or t <= 0 for t in literal) or not (literal or has_path):
        findings.append((path, "C241", f"await gate without a positive timeout (TimeoutSeconds: {timeouts[0]!r})"))
    source = payload.get("from")
    # A workflow where no Task asks gets its questions from agents over the API: nothing to compare with.
    if isinstance(source, str) and asking and source not in asking:
        known = ", ".join(sorted(asking))
        findings.append(
            (
                path,
                "C242",
                f"await gate waits on node '{source}', which never asks in this workflow (nodes that ask: {known}); "
                "it would release at once with no answers",
            )
        )
    return findings


def ladder_findings(path: str, state: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """C251: a literal ladder in a parking task's payload (`ladder`, or an interrupt's `request.ladder`)."""
    if state.get("Type") != "Task" or not str(state.get("Resource", "")).endswith(".waitForTaskToken"):
        return []
    from pydantic import ValidationError

    from baton.domain.ladder import AnswerCheck, Ladder
    from baton.errors import ValidationFailedError

    payload = task_payload(state)
    request = payload.get("request")
    declared = request.get("ladder") if isinstance(request, dict) else payload.get("ladder")
    if not isinstance(declared, dict):
        return []  # none, or from the input at run time (the input schema checks it at POST /api/runs)
    # The park checks the steps against the declared timeout_seconds; TimeoutSeconds is later by the grace.
    declared_in = request if isinstance(request, dict) else payload
    timeout = declared_in.get("timeout_seconds", state.get("TimeoutSeconds"))
    awaiting = is_await_gate(state)  # an await gate's ladder: "use_question_defaults", never a default (C261)
    try:
        # An ask's default must be an object of answers; an interrupt's is checked against its schema at park.
        check = AnswerCheck(kind="await" if awaiting else "interrupt" if isinstance(request, dict) else "answers")
        Ladder.model_validate(declared).check_for(timeout if isinstance(timeout, int) else None, answer_is=check)
    except (ValidationError, ValidationFailedError) as err:
        why = err.message if isinstance(err, ValidationFailedError) else err.errors()[0]["msg"]
        code = "C261" if awaiting else "C251"
        return [(path, code, f"the pause's ladder would be refused when it parks: {why}")]
    return []


def _literal_seconds(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def grace_findings(path: str, state: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """C245: a parking Task whose literal TimeoutSeconds does not come GRACE_SECONDS after the literal
    `timeout_seconds` it sends (an interrupt sends it in its `request`)."""
    if not _is_token_wait(state):
        return []
    payload = task_payload(state)
    request = payload.get("request")
    declared = _literal_seconds(
        request.get("timeout_seconds") if isinstance(request, dict) else payload.get("timeout_seconds")
    )
    task_timeout = _literal_seconds(state.get("TimeoutSeconds"))
    if declared is None or task_timeout is None or task_timeout >= task_timeout_seconds(declared):
        return []
    return [
        (
            path,
            "C245",
            f"TimeoutSeconds {task_timeout} leaves no grace after the pause's timeout_seconds {declared}: Step "
            "Functions could time the task out as Baton delivers its answer at the deadline; set TimeoutSeconds "
            f"to at least {task_timeout_seconds(declared)} (timeout_seconds + {GRACE_SECONDS}, "
            "baton.domain.deadline.GRACE_SECONDS)",
        )
    ]
