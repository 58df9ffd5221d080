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


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ("import slack_sdk\n", "slack_sdk"),  # shipped to the Slack functions only, not to park
        ("import mcp_types\n", "mcp_types"),  # the MCP function's own layer
        ("import jsonschema_rs\n", "jsonschema_rs"),  # a dev-machine package
        ("import httpx\n", "httpx"),  # the CLI's
        ("def later():\n    from baton.cli.main import main\n", "baton.cli"),  # lazily, the CLI: not in the layer
        ("from tests.fakes import MemoryStore\n", "tests"),  # a fake: never deployed
    ],
)
def test_the_check_names_the_function_and_the_module_a_handler_imports_but_does_not_ship(
    synthesized_full: Any, tmp_path: Path, source: str, named: str
) -> None:
    # The assembly with park's code asset copied (and planted), every other entry linked.
    outdir = tmp_path / "cdk.out"
    outdir.mkdir()
    park = _code_asset(synthesized_full.outdir, "baton-ci-park")
    for entry in synthesized_full.outdir.iterdir():
        if entry == park:
            shutil.copytree(entry, outdir / entry.name)
        else:
            (outdir / entry.name).symlink_to(entry)
    handler = outdir / park.name / "handler.py"
    handler.write_text(handler.read_text() + source)
    result = _check(outdir, "baton-ci-park")
    assert result.returncode == 1, result.stdout
    (failed,) = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert failed.startswith("FAIL baton-ci-park: ") and f"No module named '{named}" in failed, failed
