"""`baton policy check` and `baton policy test` (issue 31): the fixtures pass, a bad policy, an allowed must-ask
call and a failing case exit 1 saying why, a malformed file exits 2 saying where, and --json parses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from baton.cli.main import app
from baton.policy.cases import load_must_ask
from baton.policy.check import must_ask
from baton.policy.engine import Policy

EXAMPLES = Path(__file__).parents[2] / "examples" / "policy"
TOOLS = str(EXAMPLES / "tools.cedar")
RISK_TIERS = str(EXAMPLES / "risk_tiers.cedar")


def baton(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["policy", *args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def write(tmp_path: Path, name: str, content: object) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


@pytest.mark.parametrize(
    ("policy", "must_ask_file"), [(TOOLS, "must_ask.json"), (RISK_TIERS, "risk_tiers.must_ask.json")]
)
def test_check_passes_the_examples_with_their_must_ask_calls(policy: str, must_ask_file: str) -> None:
    code, out = baton("check", policy, "--must-ask", str(EXAMPLES / must_ask_file))
    assert code == 0, out
    assert out.startswith("ok: ") and "2 must-ask calls" in out


def test_check_refuses_a_bad_policy_printing_each_problem_with_the_rules_id(tmp_path: Path) -> None:
    bad = write(
        tmp_path,
        "bad.cedar",
        '@id("reads-nope") permit(principal, action, resource) when { context.nope };\n'
        '@id("half-ask") @quorum("2") permit(principal, action, resource);\n',
    )
    code, out = baton("check", bad)
    assert code == 1
    lines = out.splitlines()
    assert any("does not validate" in line and "reads-nope" in line and "policy0" not in line for line in lines)
    assert any("rule half-ask: @approvers, @quorum and @timeout need @ask" in line for line in lines)
    assert lines[-1] == f"{bad}: refused (3 problems)"  # nope is missing for both actions: two lines


def test_check_refuses_a_policy_that_allows_a_must_ask_call_naming_the_rule_and_the_context(tmp_path: Path) -> None:
    calls = [{"name": "terraform apply", "query": {"target": "Bash", "arguments": {"command": "terraform apply"}}}]
    code, out = baton("check", RISK_TIERS, "--must-ask", write(tmp_path, "must.json", calls))
    assert code == 1
    # Low risk with a remembered grant is the first context (risk, then granted, hour, weekday) that allows it.
    assert (
        "must-ask call 'terraform apply' is allowed by rule granted when risk=low granted=true hour=0 weekday=1" in out
    )
    assert out.splitlines()[-1].startswith("refused: ")


def test_must_ask_varies_session_and_run_over_the_strings_the_policy_names() -> None:
    calls = load_must_ask('[{"name": "any call", "query": {"target": "Bash", "session": "s-1"}}]')
    trusted = Policy.load('@id("trusted") permit(principal, action, resource) when { context.session == "ops-7" };')
    verdict = must_ask(trusted, calls)
    assert verdict.varied == ["session"] and verdict.decisions == 2  # the call's own session, then "ops-7"
    assert (verdict.violations[0].rule, verdict.violations[0].context.session) == ("trusted", "ops-7")
    canary = Policy.load(
        '@id("canary") permit(principal, action, resource) when { context.run like "canary-*" && context.hour > 20 };'
    )
    violation = must_ask(canary, calls).violations[0]
    assert (violation.rule, violation.context.run, violation.context.hour) == ("canary", "canary-", 21)


def test_must_ask_varies_nothing_a_policy_does_not_read() -> None:
    verdict = must_ask(Policy.load(Path(TOOLS).read_text()), load_must_ask((EXAMPLES / "must_ask.json").read_text()))
    assert (verdict.ok, verdict.varied, verdict.decisions) == (True, [], 2)


def test_must_ask_tries_every_risk_grant_hour_and_weekday() -> None:
    policy = Policy.load(
        '@id("sunday-night") permit(principal, action, resource) when '
        '{ context.weekday == 7 && context.hour == 23 && context.risk == "high" && context.granted };'
    )
    verdict = must_ask(policy, load_must_ask('[{"name": "x", "query": {"target": "Bash"}}]'))
    assert verdict.decisions == 3 * 2 * 24 * 7  # the allowing context is the last one tried
    assert verdict.violations[0].context.model_dump() == {
        "risk": "high",
        "granted": True,
        "hour": 23,
        "weekday": 7,
        "session": "",
        "run": "",
    }


@pytest.mark.parametrize(("policy", "cases"), [(TOOLS, "tools.cases.json"), (RISK_TIERS, "risk_tiers.cases.json")])
def test_test_passes_the_example_cases(policy: str, cases: str) -> None:
    code, out = baton("test", policy, str(EXAMPLES / cases))
    assert code == 0, out
    assert "FAIL" not in out and " passed, 0 failed" in out.splitlines()[-1]


def test_the_tools_cases_cover_every_outcome() -> None:
    cases = json.loads((EXAMPLES / "tools.cases.json").read_text())
    expected = {(c["expect"]["outcome"], c["expect"].get("rule", "?")) for c in cases}
    assert {"allow", "deny", "ask"} == {outcome for outcome, _ in expected}
    assert ("ask", None) in expected  # no rule matched
    assert any("quorum" in c["expect"] and "approvers" in c["expect"] for c in cases)


def test_a_failing_case_exits_1_with_expected_got_and_the_deciding_rule(tmp_path: Path) -> None:
    cases = [
        {"name": "ls", "query": {"target": "Bash", "arguments": {"command": "ls"}}, "expect": {"outcome": "allow"}},
        {
            "name": "rm wrongly expected allowed",
            "query": {"target": "Bash", "arguments": {"command": "rm -rf /"}},
            "expect": {"outcome": "allow", "quorum": 1},
        },
    ]
    code, out = baton("test", TOOLS, write(tmp_path, "cases.json", cases))
    assert code == 1
    assert "PASS ls" in out and "FAIL rm wrongly expected allowed" in out
    assert "  outcome: expected allow, got ask" in out and "  quorum: expected 1, got 2" in out
    assert "  decided by: rule destructive (rule destructive requires approval)" in out
    assert out.splitlines()[-1].startswith("1 passed, 1 failed (2 cases")


def test_a_case_without_a_time_is_named_when_the_policy_reads_the_clock(tmp_path: Path) -> None:
    deploy = {"action": "pass_gate", "target": "deploy"}
    cases = [
        {"name": "deploy now", "query": deploy, "expect": {"outcome": "ask", "rule": None}},
        {"name": "tuesday", "query": deploy | {"at": "2026-12-01T10:00:00+00:00"}, "expect": {"outcome": "ask"}},
    ]
    _, out = baton("test", RISK_TIERS, write(tmp_path, "cases.json", cases))
    assert out.splitlines()[-1] == (
        "note: the policy reads the hour or weekday; decided at the current time (no `at`): deploy now"
    )
    assert "note:" not in baton("test", TOOLS, write(tmp_path, "tools.json", cases[:1]))[1]


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("[{", "not JSON"),
        ('{"name": "x"}', "expected a JSON list"),
        (
            [{"name": "typo", "query": {"target": "Bash", "argument": {}}, "expect": {"outcome": "allow"}}],
            "entry 0 (typo): query: Value error, unknown field(s) argument",
        ),
        ([{"name": "ok", "query": {"target": "Bash"}, "expect": {"outcome": "allow"}}, 3], "entry 1: entry:"),
        (
            [{"name": "bad", "query": {"target": "Bash"}, "expect": {"outcome": "maybe"}}],
            "entry 0 (bad): expect.outcome",
        ),
        ([{"name": "q", "query": {"target": "Bash"}, "expect": {"outcome": "allow", "quorom": 2}}], "expect.quorom"),
        ([{"name": "d", "query": {"target": "B"}, "expect": {"outcome": "allow"}}] * 2, "name 'd' is used twice"),
    ],
)
def test_a_malformed_cases_file_exits_2_saying_where(tmp_path: Path, content: object, where: str) -> None:
    code, out = baton("test", TOOLS, write(tmp_path, "cases.json", content))
    assert code == 2
    assert where in out, out


def test_an_unreadable_file_exits_2(tmp_path: Path) -> None:
    assert baton("check", str(tmp_path / "missing.cedar"))[0] == 2
    assert baton("check", TOOLS, "--must-ask", str(tmp_path / "missing.json"))[0] == 2
    assert baton("test", TOOLS, str(tmp_path / "missing.json"))[0] == 2


def test_check_json_shapes(tmp_path: Path) -> None:
    code, out = baton("check", TOOLS, "--must-ask", str(EXAMPLES / "must_ask.json"), "--json")
    body = json.loads(out)
    assert code == 0 and body["ok"] is True and body["problems"] == [] and body["rules"] == 3
    assert body["version"].startswith("sha256:") and body["must_ask"]["violations"] == []
    code, out = baton("check", write(tmp_path, "bad.cedar", "permit(principal,"), "--json")
    assert code == 1 and json.loads(out)["ok"] is False and "does not parse" in json.loads(out)["problems"][0]
    calls = [{"name": "tf", "query": {"target": "Bash"}}]
    code, out = baton("check", RISK_TIERS, "--must-ask", write(tmp_path, "m.json", calls), "--json")
    violation = json.loads(out)["must_ask"]["violations"][0]
    assert code == 1 and (violation["call"], violation["rule"], violation["context"]["risk"]) == (
        "tf",
        "granted",
        "low",
    )


def test_test_json_shape(tmp_path: Path) -> None:
    code, out = baton("test", TOOLS, str(EXAMPLES / "tools.cases.json"), "--json")
    body = json.loads(out)
    assert code == 0 and (body["ok"], body["failed"], body["passed"]) == (True, 0, 4)
    first = body["cases"][0]
    assert first["passed"] is True and first["mismatches"] == []
    assert first["expected"] == {"outcome": "allow", "rule": "read-only"}
    assert first["got"]["outcome"] == "allow" and first["got"]["rule"] == "read-only"
