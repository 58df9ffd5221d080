"""The deployed functions get only the baton layer (as its asset ships: no CLI, local stack or SDK), the
Powertools layer and boto3: check that every handler imports with nothing else (in a fresh interpreter,
so this process's imports don't hide any)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_handler_imports_without_dev_machine_packages() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_lambda_imports.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    checked = [line for line in result.stdout.splitlines() if line.startswith("ok ")]
    assert len(checked) == len(list((ROOT / "functions").glob("*/handler.py")))


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ("import httpx\n", "httpx"),  # a dev-machine package
        ("from baton.cli.main import main\n", "baton.cli"),  # the CLI: not in the layer as it ships
        ("import baton.local.stack\n", "baton.local"),  # the local stack: not in the layer either
        ("from baton.client import Client\n", "baton.client"),  # nor the SDK
        ("from tests.fakes import MemoryStore\n", "tests"),  # a fake: never deployed
    ],
)
def test_the_check_fails_on_a_handler_that_imports_the_cli(tmp_path: Path, source: str, named: str) -> None:
    (tmp_path / "functions" / "bad").mkdir(parents=True)
    (tmp_path / "functions" / "bad" / "handler.py").write_text(source)
    (tmp_path / "functions" / "good").mkdir(parents=True)
    (tmp_path / "functions" / "good" / "handler.py").write_text("from baton.runtime.wiring import services\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_lambda_imports.py"), "--functions", str(tmp_path / "functions")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 1 and "FAIL bad" in result.stdout and named in result.stdout, result.stdout
    assert "ok   good" in result.stdout
