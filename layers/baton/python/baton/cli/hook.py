"""`baton hook claude-code`: a Claude Code `PreToolUse` command hook that asks a person through Baton.

It reads the hook's JSON on stdin, posts a tool approval for the call (a repeat of the same call finds the
same approval; a remembered grant answers at once), waits `--wait` seconds (below the hook's timeout),
and prints the hook's decision JSON. Approved: allow, after consuming the approval with the digest of the
input it allows (`updatedInput` when the person edited it). Denied: deny with the person's reason.
Still pending: defer when headless (`claude -p` resumes later), else deny telling the model to go on
with other work. It never allows on a timeout or an error.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated

import typer

HEADLESS_ENV = "BATON_HOOK_HEADLESS"
RUN_ENV = "BATON_RUN"

HOOK_HELP = (
    "A Claude Code PreToolUse command hook: a person approves each tool call through Baton.\n\n"
    f"Reads the PreToolUse JSON on stdin; the run is ${RUN_ENV}, else the Claude Code session id. "
    "A repeat of the same call finds the same approval; a remembered grant answers at once.\n\n"
    'Prints {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": ..., '
    '"permissionDecisionReason": ..., "updatedInput": ...}} and exits 0. allow: approved (after consuming the '
    "approval; updatedInput when edited). deny: denied (the person's reason), timed out (the default), an "
    f"error, or still pending without --headless. defer: still pending with --headless or ${HEADLESS_ENV}=1 "
    "(the session is recorded for `baton claude-code resume`).\n\n"
    "Exit 2 (Claude Code blocks the call; the reason on stderr): stdin is not a PreToolUse event.\n\n"
    "Never allows on a timeout or an error."
)

hook_app = typer.Typer(help="Hooks that route an agent framework's tool approvals to Baton.", no_args_is_help=True)


@hook_app.command("claude-code", help=HOOK_HELP)
def claude_code(
    wait: Annotated[
        float, typer.Option("--wait", min=0, help="Seconds to wait for a decision (keep below the hook's timeout).")
    ] = 50.0,
    headless: Annotated[
        bool, typer.Option("--headless", envvar=HEADLESS_ENV, help="Still pending: defer, not deny.")
    ] = False,
    timeout_seconds: Annotated[
        int, typer.Option("--timeout-seconds", min=1, help="The approval's deadline (then denied).")
    ] = 3600,
) -> None:
    from pydantic import ValidationError  # imported on use: `baton --help` stays light

    from baton.cli.common import client
    from baton.client.claude_code import DeferredSessions, HookSettings, PreToolUse, decide, hook_output

    try:
        event = PreToolUse.model_validate_json(sys.stdin.read())
    except ValidationError as bad:
        print(f"baton hook claude-code: stdin is not a PreToolUse event: {bad.errors()[0]['msg']}", file=sys.stderr)
        raise typer.Exit(2) from None

    settings = HookSettings(wait, headless, timeout_seconds, os.environ.get(RUN_ENV), DeferredSessions())
    try:
        out = decide(event, client(), settings)
    except Exception as err:  # no API configured: deny, never allow
        out = hook_output("deny", f"Baton is not reachable ({err}); the call was not run.")
    print(json.dumps(out))
