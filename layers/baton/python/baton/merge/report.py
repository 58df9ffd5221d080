"""The one path that reports a merge's outcome to the waiting Step Functions task, locally and deployed.

`python -m baton.merge` calls `report_outcome` / `report_failure` itself when it holds the task token
(the local stack's subprocess runner). The CodeBuild merge build (infra/buildspec/merge.yml) merges
without the token, pushes, then reports through the same functions with
`python -m baton.merge.report send-task-success --outcome FILE` or
`python -m baton.merge.report send-task-failure --error NAME --cause TEXT|--cause-file FILE`.
Every failure cause is capped here, once, at `MAX_CAUSE_CHARS`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baton.domain.merge_contracts import MergeOutcome

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.ports import TaskTokens

TASK_TOKEN_ENV = "BATON_TASK_TOKEN"
MAX_CAUSE_CHARS = 32_000  # SendTaskFailure caps `cause` at 32768 characters
ERROR_INVALID_INPUT = "MergeInvalidInput"
ERROR_CRASHED = "MergeCrashed"

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_REPORT_FAILED = 4


def cap_cause(cause: str) -> str:
    return cause[:MAX_CAUSE_CHARS]


def default_task_tokens() -> TaskTokens:
    """Step Functions callbacks from the environment (imported late: `--help` needs no AWS SDK)."""
    from baton.adapters.clients import step_functions_client
    from baton.adapters.sfn import SfnTaskTokens

    return SfnTaskTokens(step_functions_client())


def report_outcome(tokens: TaskTokens, token: str, outcome: MergeOutcome) -> None:
    """merged, noop and rejected are answers: SendTaskSuccess with the outcome."""
    tokens.send_success(token, outcome.model_dump(mode="json"))


def report_failure(tokens: TaskTokens, token: str, error: str, cause: str) -> None:
    """The merge could not run (MergeInvalidInput) or crashed (MergeCrashed): SendTaskFailure."""
    tokens.send_failure(token, error, cap_cause(cause))


def send_report(tokens: TaskTokens, token: str, outcome: MergeOutcome | None, error: str, cause: str) -> int:
    """Report `outcome`, else the failure; EXIT_REPORT_FAILED (and a line on stderr) if it did not reach."""
    try:
        if outcome is not None:
            report_outcome(tokens, token, outcome)
        else:
            report_failure(tokens, token, error, cause)
    except Exception as exc:
        print(f"error: could not report the merge outcome to Step Functions: {exc}", file=sys.stderr)
        return EXIT_REPORT_FAILED
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m baton.merge.report",
        description="Report a merge outcome (or why the merge could not run) to the waiting Step Functions "
        f"task named by ${TASK_TOKEN_ENV}.",
    )
    calls = parser.add_subparsers(dest="call", required=True)
    success = calls.add_parser("send-task-success", help="merged, noop or rejected: send the outcome")
    success.add_argument("--outcome", type=Path, required=True, help="the outcome JSON of `python -m baton.merge`")
    failure = calls.add_parser("send-task-failure", help="the merge could not run or crashed")
    failure.add_argument("--error", choices=[ERROR_INVALID_INPUT, ERROR_CRASHED], required=True)
    failure.add_argument("--cause", default="", help="the failure's cause")
    failure.add_argument("--cause-file", type=Path, help="read the failure's cause from this file")
    return parser


def main(argv: Sequence[str] | None = None, *, tokens: TaskTokens | None = None) -> int:
    """CLI entry point; `tokens` replaces the Step Functions callbacks (tests)."""
    args = build_parser().parse_args(argv)
    token = os.environ.get(TASK_TOKEN_ENV) or ""
    if not token:
        print(f"error: {TASK_TOKEN_ENV} is not set; nothing to report to", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.call == "send-task-success":
        outcome = MergeOutcome.model_validate(json.loads(args.outcome.read_text()))
        return send_report(tokens or default_task_tokens(), token, outcome, "", "")
    cause = args.cause
    if args.cause_file is not None:
        cause = args.cause_file.read_text(errors="replace").strip() or cause
    return send_report(tokens or default_task_tokens(), token, None, args.error, cause)


if __name__ == "__main__":
    raise SystemExit(main())
