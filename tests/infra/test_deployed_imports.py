"""Lambda-faithful imports (scripts/check_lambda_imports.py): every deployed function imports its handler
and every module it can reach from its own code asset and layers as synthesized, on Python 3.13, isolated;
and the check fails, naming the function and the module, on a handler that imports what it does not ship."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.check_lambda_imports import deployed_functions

pytestmark = pytest.mark.infra
ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check_lambda_imports.py"


def _check(outdir: Path, *only: str) -> subprocess.CompletedProcess[str]:
    functions = [arg for name in only for arg in ("--function", name)]
    return subprocess.run(
        [sys.executable, str(CHECK), "--cdk-out", str(outdir), *functions], capture_output=True, text=True, timeout=600
    )


def _code_asset(outdir: Path, function: str) -> Path:
    """The staged code folder of `function` (its FunctionName), as the check finds it."""
    (found,) = [f.code for f in deployed_functions(outdir) if f.name == function]
    return found


def test_every_deployed_function_imports_everything_it_can_reach(synthesized_full: Any) -> None:
    result = _check(synthesized_full.outdir)
    assert result.returncode == 0, result.stdout + result.stderr
    resources = json.loads(synthesized_full.template_path.read_text())["Resources"].values()
    deployed = [r for r in resources if r["Type"] == "AWS::Lambda::Function"]
    checked = [line for line in result.stdout.splitlines() if line.startswith("ok ")]
    # Every function, the optional ones included (the audit archive; notify_slack as the Slack app).
    assert len(checked) == len(deployed) == len(deployed_functions(synthesized_full.outdir)), result.stdout
    assert any("-audit_archive " in line for line in checked), result.stdout


# What a handler may not import, planted one per function (functions with the same layers: one sandbox).
PLANTED = {
    "park": ("import slack_sdk\n", "slack_sdk"),  # shipped to the Slack functions only
    "gate_timeout": ("import mcp_types\n", "mcp_types"),  # the MCP function's own layer
    "review_turn": ("import jsonschema_rs\n", "jsonschema_rs"),  # a dev-machine package
    "review_park": ("import httpx\n", "httpx"),  # the CLI's
    "merge_start": ("def later():\n    from baton.cli.main import main\n", "baton.cli"),  # lazily: the CLI
    "diff_start": ("from tests.fakes import MemoryStore\n", "tests"),  # a fake: never deployed
}


def test_the_check_names_the_function_and_the_module_a_handler_imports_but_does_not_ship(
    synthesized_full: Any, tmp_path: Path
) -> None:
    # The assembly with the planted functions' code assets copied (and planted), every other entry linked.
    outdir = tmp_path / "cdk.out"
    outdir.mkdir()
    planted = {_code_asset(synthesized_full.outdir, f"baton-ci-{name}"): name for name in PLANTED}
    for entry in synthesized_full.outdir.iterdir():
        if entry in planted:
            shutil.copytree(entry, outdir / entry.name)
            handler = outdir / entry.name / "handler.py"
            handler.write_text(handler.read_text() + PLANTED[planted[entry]][0])
        else:
            (outdir / entry.name).symlink_to(entry)
    result = _check(outdir, *(f"baton-ci-{name}" for name in PLANTED))
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    failed = {line.split(":")[0].removeprefix("FAIL baton-ci-"): line for line in lines if line.startswith("FAIL")}
    assert set(failed) == set(PLANTED), result.stdout
    for name, (_, module) in PLANTED.items():
        assert f"No module named '{module}" in failed[name], failed[name]
