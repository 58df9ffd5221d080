"""`python -m baton.merge RUN_BRANCH [--repo PATH] [--into current|none|BRANCH] [--strategy squash|merge]
[--message TEXT] [--json] [--task-token TOKEN]`: the merge build's and the local stack's merge command.

It runs `baton.merge.squash.merge_run_branch`, prints the outcome and, when it holds a task token,
reports it through `baton.merge.report` (the one reporting path). Exit status: 0 merged or noop,
1 rejected, 2 bad input, 3 crash, 4 the outcome could not be reported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton.errors import BatonError
from baton.merge.gitcmd import GitCommandError
from baton.merge.report import (
    ERROR_CRASHED,
    ERROR_INVALID_INPUT,
    EXIT_BAD_INPUT,
    EXIT_OK,
    TASK_TOKEN_ENV,
    default_task_tokens,
    send_report,
)
from baton.merge.squash import merge_run_branch

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.merge_contracts import MergeOutcome
    from baton.ports import TaskTokens

EXIT_REJECTED = 1
EXIT_CRASHED = 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m baton.merge",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Merge a run's branch into its target branch (the merge step of Baton's review gate).\n\n"
            "squash (default) lands the run as ONE commit on the target; merge fast-forwards only.\n"
            "The target must be the checked-out branch and the working tree clean, otherwise the merge\n"
            "is REJECTED and the repository is left exactly as it was; conflicts are rejected the same\n"
            "way, with the conflicting files listed. Running it again after a success is a NOOP."
        ),
        epilog=(
            "examples:\n"
            "  python -m baton.merge baton/run-42                       squash into the current branch\n"
            "  python -m baton.merge baton/run-42 --strategy merge      fast-forward only\n"
            "  python -m baton.merge baton/run-42 --into none           branch-only review, touch nothing\n"
            "  python -m baton.merge baton/run-42 --repo ../app --into main --json\n\n"
            "exit status:\n"
            "  0 merged or noop   1 rejected   2 bad input (unknown repo/branch, bad strategy)\n"
            "  3 unexpected crash   4 the outcome could not be reported to Step Functions\n\n"
            f"reporting: when ${TASK_TOKEN_ENV} is set (or --task-token is given), the outcome is sent\n"
            "to Step Functions: SendTaskSuccess with the outcome JSON for merged/noop/rejected,\n"
            f"SendTaskFailure error={ERROR_INVALID_INPUT} for bad input and error={ERROR_CRASHED} for crashes\n"
            "(python -m baton.merge.report sends the same reports on its own, for the merge build).\n"
            "AWS_ENDPOINT_URL / AWS_REGION are honoured by boto3 (e.g. a local emulator)."
        ),
    )
    parser.add_argument("run_branch", help="the run's (storage) branch holding the agent's commits")
    parser.add_argument("--repo", type=Path, default=Path("."), help="path to the git repository (default: .)")
    parser.add_argument(
        "--into",
        default="current",
        metavar="current|none|BRANCH",
        help="target: the checked-out branch (default), none (leave the result on the run branch), "
        "or a branch name, which must be the checked-out one",
    )
    parser.add_argument(
        "--strategy",
        default="squash",
        metavar="squash|merge",
        help="squash into one commit (default) or fast-forward only",
    )
    parser.add_argument(
        "-m",
        "--message",
        default=None,
        help="squash commit message (default: names the run branch and lists its commit subjects)",
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument(
        "--task-token",
        default=None,
        help=f"Step Functions task token to report to (default: ${TASK_TOKEN_ENV})",
    )
    return parser


def format_outcome(outcome: MergeOutcome) -> str:
    line = f"{outcome.merge_status}: {outcome.reason}"
    if outcome.final_commit:
        line += f" [final_commit={outcome.final_commit} final_branch={outcome.final_branch}]"
    for path in outcome.conflicting_files:
        line += f"\n  conflict: {path}"
    return line


def _crash_cause(exc: Exception, detail: str) -> str:
    summary = f"git failed: {exc}" if isinstance(exc, GitCommandError) else f"{type(exc).__name__}: {exc}"
    return summary + "\n\n" + detail


def main(argv: Sequence[str] | None = None, *, sfn_client: Any | None = None) -> int:
    """CLI entry point; `sfn_client` replaces the boto3 Step Functions client (tests)."""
    args = build_parser().parse_args(argv)
    token = args.task_token or os.environ.get(TASK_TOKEN_ENV) or None

    def report(outcome: MergeOutcome | None, error: str = "", cause: str = "") -> int:
        if token is None:
            return EXIT_OK
        return send_report(_task_tokens(sfn_client), token, outcome, error, cause)

    try:
        outcome = merge_run_branch(
            args.repo, args.run_branch, into=args.into, strategy=args.strategy, message=args.message
        )
    except BatonError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return report(None, ERROR_INVALID_INPUT, exc.message) or EXIT_BAD_INPUT
    except Exception as exc:
        detail = traceback.format_exc()
        print(detail, file=sys.stderr, end="")
        return report(None, ERROR_CRASHED, _crash_cause(exc, detail)) or EXIT_CRASHED

    print(json.dumps(outcome.model_dump(mode="json"), indent=2) if args.json else format_outcome(outcome))
    reported = report(outcome)
    if reported:
        return reported
    return EXIT_REJECTED if outcome.merge_status == "rejected" else EXIT_OK


def _task_tokens(sfn_client: Any | None) -> TaskTokens:
    if sfn_client is None:
        return default_task_tokens()
    from baton.adapters.sfn import SfnTaskTokens

    return SfnTaskTokens(sfn_client)
