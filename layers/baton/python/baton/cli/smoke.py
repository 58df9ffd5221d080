"""`baton smoke`: check a fresh deployment (or the local stack) end to end, one line per check."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from baton.cli.common import JsonFlag, err_console, fail, plain_console, print_json

_STYLE = {"ok": "green", "failed": "bold red", "skipped": "yellow"}


def smoke(
    api_url: Annotated[
        str | None,
        typer.Option(
            "--api-url",
            envvar="BATON_API_URL",
            help="The API to check: a deployed stack's `baton-<team>-api-url` output (signed with your AWS "
            "credentials), or the local stack's URL. Default: BATON_API_URL, then .baton/local.json.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option("--token", envvar="BATON_TOKEN", help="A bearer token (the local stack's operator token)."),
    ] = None,
    review_branch: Annotated[
        str | None,
        typer.Option(
            "--review-branch",
            help="A throwaway branch in the deployment's repository for the review check (never merged: the "
            "gate runs with merge_into none). Not needed locally: a throwaway repository is made.",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", min=5, help="Seconds each check may wait (a review's CodeBuild builds take minutes)."
        ),
    ] = 300.0,
    as_json: JsonFlag = False,
) -> None:
    """Smoke-test a Baton deployment right after `cdk deploy` (or the local stack): each check creates what
    it needs, drives it as an agent and an operator would, and says in words what works.

    \b
    The checks, in order:
      api         GET /api/me answers; the credentials are an operator's
      ask         an async question is posted and listed as pending
      answer      it is answered; the agent's drain delivers the answer
      await gate  a hosted run asks and parks; the answer releases it
      interrupt   a hosted run raises one; resuming with a value ends it
      review      a review gate on a throwaway branch: companion turn,
                  approve, merge build with merge_into none (no branch
                  changes). Deployed: needs --review-branch and a
                  repository, else skipped. Locally: a throwaway repo
      notify <c>  per channel (console, email, webhook, slack): accepted
                  and published, or skipped when not wired. Delivery is
                  not visible to the API: the line says where to look

    \b
    One line per check: `ok: ...`, `failed: <why>` or `skipped: <why>`.
    Exit code 1 when any check failed. Runs are named
    smoke-<time>-<random>-<check>; what a failed check leaves open is
    stopped, answered or cancelled at the end, and every pause ends on
    its own a minute after --timeout anyway. Waits print a progress
    line about every 10 s.

    \b
    Examples:
      baton smoke                     # the local stack (`baton dev`)
      AWS_PROFILE=alpha baton smoke --api-url "$BATON_API_URL" \\
          --review-branch baton-smoke
      baton smoke --json | jq '.checks[] | select(.outcome=="failed")'
    """
    from baton.client.sdk import Client
    from baton.errors import BatonError
    from baton.smoke.checks import SmokeTest, Waiter
    from baton.smoke.report import CheckResult

    def progress(line: str) -> None:
        err_console.print(f"  … {escape(line)}")

    def show(result: CheckResult) -> None:
        if not as_json:
            style = _STYLE[result.outcome]
            plain_console.print(f"{result.name:<16} [{style}]{result.outcome}[/]: {escape(result.detail)}")

    try:
        client = Client(api_url, token, timeout=min(30.0, timeout))
    except BatonError as err:
        fail(err)
    with client:
        if not as_json:
            err_console.print(f"baton smoke against {client.api_url} (runs named smoke-…)")
        report = SmokeTest(client, Waiter(timeout=timeout, progress=progress), review_branch=review_branch).run(show)
    if as_json:
        print_json(report)
    else:
        for note in report.cleanup:
            err_console.print(f"  cleanup: {escape(note)}")
        failed = len(report.failed)
        summary = f"{failed} of {len(report.checks)} checks failed" if failed else "no check failed"
        plain_console.print(f"{summary} (runs tagged {report.tag})")
    if report.failed:
        raise typer.Exit(code=1)
