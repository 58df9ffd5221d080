"""`python -m baton.merge RUN_BRANCH [--repo PATH] [--into current|none|BRANCH] [--strategy squash|merge]
[--message TEXT] [--json]`: merge a run branch by hand, with the review gate's merge rules.

It runs `baton.merge.squash.merge_run_branch` and prints the outcome. It reports to nobody: the review
gate's builds run `python -m baton.merge.build` (baton/merge/build.py), which writes its report into
Baton's table. Exit status: 0 merged or noop, 1 rejected, 2 bad input, 3 crash.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from baton.errors import BatonError
from baton.merge.build import EXIT_BAD_INPUT, EXIT_CRASHED, EXIT_OK, EXIT_REJECTED
from baton.merge.gitcmd import GitCommandError
from baton.merge.squash import merge_run_branch

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.merge_contracts import MergeOutcome


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
            "  3 unexpected crash\n\n"
            "The review gate runs the same merge through python -m baton.merge.build, which clones the\n"
            "repository when deployed and writes the outcome into Baton's table."
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
    return parser


def format_outcome(outcome: MergeOutcome) -> str:
    line = f"{outcome.merge_status}: {outcome.reason}"
    if outcome.final_commit:
        line += f" [final_commit={outcome.final_commit} final_branch={outcome.final_branch}]"
    for path in outcome.conflicting_files:
        line += f"\n  conflict: {path}"
    return line


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    args = build_parser().parse_args(argv)
    try:
        outcome = merge_run_branch(
            args.repo, args.run_branch, into=args.into, strategy=args.strategy, message=args.message
        )
    except BatonError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        summary = f"git failed: {exc}" if isinstance(exc, GitCommandError) else f"{type(exc).__name__}: {exc}"
        print(f"error: {summary}\n{traceback.format_exc()}", file=sys.stderr, end="")
        return EXIT_CRASHED
    print(json.dumps(outcome.model_dump(mode="json"), indent=2) if args.json else format_outcome(outcome))
    return EXIT_REJECTED if outcome.merge_status == "rejected" else EXIT_OK
