"""The `baton` command line, assembled: each command group lives in its own module of this package
(runs.py, review.py, workflow.py, dev.py, tools.py, audit.py; shared helpers in common.py). Every command has
`--help`; the ones that print data take `--json` for scripts. Errors print one readable line and exit
non-zero."""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["dev"]:  # first: gevent patches the standard library before the imports below use it
    from baton.local.cooperative import cooperative_if_dev

    cooperative_if_dev(sys.argv)

import typer

from baton.cli.audit import audit_app
from baton.cli.claude_code import claude_code_app
from baton.cli.dev import dev, inbox_login
from baton.cli.hook import hook_app
from baton.cli.mcp import mcp_command
from baton.cli.migrate import migrate_app
from baton.cli.policy import policy_app
from baton.cli.policy_history import register as register_policy_history
from baton.cli.push import push_app
from baton.cli.redrive import REDRIVE_HELP, redrive_command
from baton.cli.review import review_app
from baton.cli.runs import resume, runs_app
from baton.cli.smoke import smoke
from baton.cli.tools import agent_token_command, check_asl, operator_token_command, synth
from baton.cli.workflow import workflow_app

app = typer.Typer(
    help="Baton: human-in-the-loop gates for AI agent workflows on AWS.\n\n"
    "Start the embedded local stack with `baton dev`; other commands find it through .baton/local.json.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(runs_app, name="runs")
app.add_typer(workflow_app, name="workflow")
app.command()(dev)
app.command("inbox-login")(inbox_login)
app.command()(resume)
app.add_typer(review_app, name="review")
app.add_typer(audit_app, name="audit")
app.command("agent-token")(agent_token_command)
app.command("operator-token")(operator_token_command)
app.command("mcp")(mcp_command)
app.command("check")(check_asl)
app.command("check-asl", help="The same as `baton check` (its former name).")(check_asl)
app.command()(synth)
app.command()(smoke)
app.command("redrive", help=REDRIVE_HELP)(redrive_command)
app.add_typer(migrate_app, name="migrate")
app.add_typer(hook_app, name="hook")
app.add_typer(claude_code_app, name="claude-code")
register_policy_history(policy_app)  # backtest, report: beside check and test
app.add_typer(policy_app, name="policy")
app.add_typer(push_app, name="push")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
