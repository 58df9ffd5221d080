"""`baton policy check|test`: a Cedar policy tested like code before it decides a call (issue 31).

Exit codes: 0 the policy passes, 1 it fails (a problem, a must-ask call allowed, a case that fails), 2 bad
usage or a file that cannot be read or does not fit its format. Offline: no API, no AWS; the engine
(cedarpy) is imported on use, so `baton --help` stays fast."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from baton.cli.common import JsonFlag, print_json

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.policy.engine import Policy

Entry = TypeVar("Entry")

policy_app = typer.Typer(
    help="Policies before people: check a Cedar policy and test it against cases, offline.",
    no_args_is_help=True,
)

PolicyFile = Annotated[Path, typer.Argument(help="The Cedar policy file, e.g. examples/policy/tools.cedar.")]

CHECK_HELP = (
    "Parse a policy and validate it against Baton's schema; with --must-ask, prove that the listed calls are "
    "never allowed.\n\n"
    "Every problem is printed on its own line, naming the rule by its @id.\n\n"
    '--must-ask FILE is a JSON list of {"name": ..., "query": {...}}: calls (a query as in `baton policy test`) '
    "that must be asked or denied, never allowed. Each is decided under every context a rule can read: risk "
    "low/medium/high, granted true/false, every hour 0..23 and weekday 1..7 (UTC), and for session and run the "
    "call's own value and every string the policy names. The first context that allows a call is printed with "
    "the rule that allowed it. Not covered: argument values, agents, teams or tools other than the listed "
    "calls' (list each call you mean, e.g. `rm -rf /` and `rm -rf build`).\n\n"
    "Example: baton policy check examples/policy/tools.cedar --must-ask examples/policy/must_ask.json\n\n"
    "Exit 0 the policy passes, 1 it fails, 2 a file cannot be read or is malformed."
)

TEST_HELP = (
    "Decide each case of CASES with the policy and compare the outcome with what the case expects.\n\n"
    'CASES is a JSON list of cases: [{"name": "rm asks sre", "query": {"target": "Bash", "arguments": '
    '{"command": "rm -rf build"}, "risk": "high"}, "expect": {"outcome": "ask", "rule": "destructive", '
    '"approvers": ["group:sre"], "quorum": 2}}]\n\n'
    "query is the call: action (call_tool or pass_gate), target (the tool or gate), arguments, agent, team, "
    "workflow, run_id, session, risk (low/medium/high), granted, at (ISO 8601 UTC; give it when a rule reads "
    "the hour or weekday). expect names the outcome (allow, deny, ask) and, when given, the deciding rule's "
    "@id (null: no rule matched), the approvers and the quorum. One PASS/FAIL line per case, then a summary.\n\n"
    "Example: baton policy test examples/policy/tools.cedar examples/policy/tools.cases.json\n\n"
    "Exit 0 every case passes, 1 a case fails or the policy is refused, 2 a file cannot be read or is malformed."
)


def _usage(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        _usage(f"cannot read {path}: {err.strerror if isinstance(err, OSError) else err}")


def _load_policy(path: Path, as_json: bool) -> Policy:
    """The loaded policy, or its problems (one per line, rules named by @id) and exit 1."""
    from baton.policy.check import with_rule_ids
    from baton.policy.engine import Policy, PolicyError

    text = _read(path)
    try:
        return Policy.load(text)
    except PolicyError as err:
        problems = with_rule_ids(text, err.problems)
    if as_json:
        print_json({"ok": False, "policy": str(path), "problems": problems})
    else:
        for problem in problems:
            typer.echo(f"{path}: {problem}")
        typer.secho(f"{path}: refused ({len(problems)} problem{'s' * (len(problems) != 1)})", fg="red")
    raise typer.Exit(code=1)


def _entries(path: Path, load: Callable[[str], list[Entry]]) -> list[Entry]:
    """The cases (or must-ask calls) of `path`, or each problem with its entry's index and name, and exit 2."""
    from baton.policy.cases import CasesFileError

    try:
        return load(_read(path))
    except CasesFileError as err:
        for problem in err.problems:
            typer.echo(f"{path}: {problem}", err=True)
        raise typer.Exit(code=2) from err


@policy_app.command("check", help=CHECK_HELP)
def check(
    policy_file: PolicyFile,
    must_ask_file: Annotated[
        Path | None, typer.Option("--must-ask", help="A JSON list of calls that must never be allowed.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    from baton.policy.cases import load_must_ask
    from baton.policy.check import must_ask

    calls = _entries(must_ask_file, load_must_ask) if must_ask_file else None
    policy = _load_policy(policy_file, as_json)
    verdict = must_ask(policy, calls) if calls is not None else None
    ok = verdict is None or verdict.ok
    if as_json:
        body = {"ok": ok, "policy": str(policy_file), "version": policy.version, "rules": len(policy.rules)}
        print_json(body | {"problems": [], "must_ask": verdict})
    else:
        for v in verdict.violations if verdict else []:
            ctx = v.context
            typer.echo(
                f"{policy_file}: must-ask call {v.call!r} is allowed by rule {v.rule} when risk={ctx.risk} "
                f"granted={json.dumps(ctx.granted)} hour={ctx.hour} weekday={ctx.weekday} "
                f"session={ctx.session!r} run={ctx.run!r} ({v.reason})"
            )
        summary = f"{policy_file}: {len(policy.rules)} rules, version {policy.version}"
        if verdict is not None:
            varied = ", ".join(verdict.varied) or "nothing (no rule reads the context)"
            summary += f"; {verdict.calls} must-ask calls, {verdict.decisions} decisions (varied: {varied})"
        typer.secho(("ok: " if ok else "refused: ") + summary, fg="green" if ok else "red")
    if not ok:
        raise typer.Exit(code=1)


@policy_app.command("test", help=TEST_HELP)
def test(
    policy_file: PolicyFile,
    cases_file: Annotated[Path, typer.Argument(help="The JSON list of cases, e.g. examples/policy/tools.cases.json.")],
    as_json: JsonFlag = False,
) -> None:
    from baton.policy.cases import load_cases
    from baton.policy.check import reads_the_clock

    cases = _entries(cases_file, load_cases)
    policy = _load_policy(policy_file, as_json)
    results: list[dict[str, Any]] = []
    for case in cases:
        got = policy.decide(case.query)
        mismatches = case.expect.mismatches(got)
        results.append(
            {"name": case.name, "passed": not mismatches, "expected": case.expect.shown(), "got": got}
            | {"mismatches": mismatches}
        )
        if not as_json:
            _print_case(case.name, mismatches, got.rule, got.reason)
    failed = sum(not r["passed"] for r in results)
    passed = len(results) - failed
    if as_json:
        print_json({"ok": not failed, "version": policy.version, "passed": passed, "failed": failed, "cases": results})
    else:
        line = f"{passed} passed, {failed} failed ({len(results)} cases, version {policy.version})"
        typer.secho(line, fg="red" if failed else "green")
        clocked = [case.name for case in cases if not case.query.at] if reads_the_clock(policy) else []
        if clocked:
            names = ", ".join(clocked)
            typer.echo(f"note: the policy reads the hour or weekday; decided at the current time (no `at`): {names}")
    if failed:
        raise typer.Exit(code=1)


def _print_case(name: str, mismatches: list[str], rule: str | None, reason: str | None) -> None:
    if not mismatches:
        typer.echo(f"PASS {name}")
        return
    typer.secho(f"FAIL {name}", fg="red")
    for mismatch in mismatches:
        typer.echo(f"  {mismatch}")
    typer.echo(f"  decided by: {f'rule {rule}' if rule else 'no rule'} ({reason})")
