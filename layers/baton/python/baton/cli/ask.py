"""`baton runs ask`: the blocking ask from the command line, with the REST body's deadline ladder and
quorum as flags. The flags are turned into the API's own models (`baton.domain.ladder.LadderFields`,
`baton.domain.approval.ApprovalPolicy`) before anything is sent, so a flag the model refuses is a usage
error naming the flag (exit 2) and nothing is asked; what the server refuses (a step after the timeout,
a default that is not one of the options) is its 422 (exit 1). Light at import: `baton --help` loads it."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from baton.cli import common
from baton.cli.common import JsonFlag, console, fail, print_json, usage
from baton.errors import BatonError

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from baton.domain.approval import ApprovalPolicy
    from baton.domain.ladder import LadderFields

# The flag each model field comes from, so a refusal names what the person typed.
FLAG_OF = {
    "remind_after": "--remind-after",
    "escalate_after": "--escalate-after",
    "escalate_to": "--escalate-to",
    "on_timeout": "--on-timeout/--default",
    "approvals": "--approvals",
    "approvers": "--approver",
    "rejection": "--rejection",
    "approve_option": "--approve-option",
}


class OnTimeoutChoice(StrEnum):
    fail = "fail"
    default = "default"


class Rejection(StrEnum):
    any = "any"
    majority = "majority"


# `--help`, one paragraph per idea (Typer keeps a docstring's line breaks; these wrap to the terminal).
HELP = "\n\n".join(
    (
        "ask_user: post a blocking ask and wait for the operator's answer.",
        "Every ask ends: at --timeout it fails (exit 1), or with --default the declared answers are taken, shown "
        "as timed_out_default (nobody's answer, never a person's approval).",
        'Deadline ladder (docs/workflows.md, "Deadline ladders"): --remind-after 300 sends one reminder to the ask\'s '
        "channels; --escalate-after 900 --escalate-to slack announces it there too. Both count from the ask and "
        "must come before --timeout.",
        'Quorum (docs/api.md, "Quorum and separation of duties"): --approvals 2 --approver alice --approver '
        "group:release needs two of them to approve; each `baton resume --run-id RUN --answer decision=approve` "
        "is a vote (reject: decision=reject, or another option), and you, the asker, cannot vote.",
        "Example: baton runs ask RUN deploy 'Ship 2.0?' -o ship -o hold --timeout 3600 --remind-after 600 "
        '--default \'{"decision": "hold"}\'',
    )
)


def _refused(err: ValidationError, what: str) -> NoReturn:
    """Exit 2 with the model's reason, in the flags' words."""
    problem = err.errors()[0]
    field = str(problem["loc"][0]) if problem["loc"] else ""
    message = str(problem["msg"]).removeprefix("Value error, ")
    for name, flag in FLAG_OF.items():
        message = message.replace(name, flag)
    usage(f"{FLAG_OF.get(field, what)}: {message}")


def _validated(model: type[BaseModel], values: dict[str, Any], what: str) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(values)
    except ValidationError as err:
        _refused(err, what)


def ladder_of(
    *,
    on_timeout: OnTimeoutChoice | None,
    default: str | None,
    remind_after: int | None,
    escalate_after: int | None,
    escalate_to: list[str] | None,
) -> LadderFields | None:
    """The ladder the flags declare (`LadderFields`), or None when they declare none."""
    from baton.domain.ladder import LadderFields

    if on_timeout is OnTimeoutChoice.default and default is None:
        usage("--on-timeout default needs --default '<answers as a JSON object>' (what is taken at the deadline)")
    if on_timeout is OnTimeoutChoice.fail and default is not None:
        usage("--on-timeout fail and --default contradict each other: give one")
    values: dict[str, Any] = {"remind_after": remind_after, "escalate_after": escalate_after}
    values["escalate_to"] = escalate_to or None
    if default is not None:
        values["on_timeout"] = {"default": common.parse_json(default, "--default")}
    given = {k: v for k, v in values.items() if v is not None}
    return _validated(LadderFields, given, "the ladder") if given else None


def approval_of(
    *, approvals: int | None, approvers: list[str] | None, rejection: Rejection | None, approve_option: str | None
) -> ApprovalPolicy | None:
    """The quorum the flags declare (`ApprovalPolicy`), or None without `--approvals`."""
    from baton.domain.approval import ApprovalPolicy

    if approvals is None:
        if approvers or rejection or approve_option:
            usage("--approver, --rejection and --approve-option need --approvals N (how many must approve)")
        return None
    values: dict[str, Any] = {"approvals": approvals, "approvers": approvers or []}
    if rejection is not None:
        values["rejection"] = rejection.value
    if approve_option is not None:
        values["approve_option"] = approve_option
    return _validated(ApprovalPolicy, values, "the quorum")  # type: ignore[no-any-return]


def runs_ask(  # noqa: PLR0913 - a Typer command: each of its options is a parameter
    run_id: Annotated[str, typer.Argument(help="The agent's run.")],
    node: Annotated[str, typer.Argument(help="The asking node.")],
    question: Annotated[str, typer.Argument(help="What the operator must decide.")],
    *,
    timeout: Annotated[int, typer.Option("--timeout", min=1, help="Seconds to wait at most (mandatory bound).")] = 600,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="A choice (repeatable).")] = None,
    notify: Annotated[
        list[str] | None, typer.Option("--notify", help="A channel to notify: console, email, slack, webhook.")
    ] = None,
    on_timeout: Annotated[
        OnTimeoutChoice | None,
        typer.Option("--on-timeout", help="At the timeout: fail (exit 1, the default) or take --default."),
    ] = None,
    default: Annotated[
        str | None,
        typer.Option("--default", help='Answers (JSON object, e.g. \'{"decision": "hold"}\') taken at the timeout.'),
    ] = None,
    remind_after: Annotated[
        int | None, typer.Option("--remind-after", min=1, help="Seconds after the ask: one reminder to its channels.")
    ] = None,
    escalate_after: Annotated[
        int | None, typer.Option("--escalate-after", min=1, help="Seconds after the ask: announce it to --escalate-to.")
    ] = None,
    escalate_to: Annotated[
        list[str] | None, typer.Option("--escalate-to", help="A channel the escalation notifies (repeatable).")
    ] = None,
    approvals: Annotated[
        int | None, typer.Option("--approvals", min=1, help="A quorum: how many operators must approve.")
    ] = None,
    approver: Annotated[
        list[str] | None,
        typer.Option("--approver", help="Who may approve: an operator name or group:<name> (repeatable)."),
    ] = None,
    rejection: Annotated[
        Rejection | None, typer.Option("--rejection", help="any (one rejection rejects, the default) or majority.")
    ] = None,
    approve_option: Annotated[
        str | None, typer.Option("--approve-option", help="The option that approves (default: the first).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """ask_user: the blocking ask (`HELP` is what `--help` shows)."""
    ladder = ladder_of(
        on_timeout=on_timeout,
        default=default,
        remind_after=remind_after,
        escalate_after=escalate_after,
        escalate_to=escalate_to,
    )
    policy = approval_of(approvals=approvals, approvers=approver, rejection=rejection, approve_option=approve_option)
    try:
        answered = common.client().ask_user(
            run_id,
            node,
            question,
            timeout_seconds=timeout,
            options=option or None,
            notify=notify or None,
            ladder=ladder,
            approval=policy,
        )
    except BatonError as err:
        fail(err)
    if as_json:
        print_json(answered)
    elif answered.outcome:
        console.print(f"{answered.outcome} (nobody answered): {json.dumps(answered.answers)}", soft_wrap=True)
    else:
        console.print(f"answered by {answered.answered_by}: {json.dumps(answered.answers)}", soft_wrap=True)
