"""The deployed functions get only the baton layer, the Powertools layer and boto3: check that every
handler imports with nothing else (in a fresh interpreter, so this process's imports don't hide any)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_the_check_fails_on_a_handler_that_imports_the_cli(tmp_path: Path) -> None:
    script = (ROOT / "scripts" / "check_lambda_imports.py").read_text()
    fake_root = tmp_path / "project"
    (fake_root / "scripts").mkdir(parents=True)
    (fake_root / "functions" / "bad").mkdir(parents=True)
    (fake_root / "scripts" / "check_lambda_imports.py").write_text(script)
    (fake_root / "functions" / "bad" / "handler.py").write_text("import httpx\n")
    result = subprocess.run(
        [sys.executable, str(fake_root / "scripts" / "check_lambda_imports.py")], capture_output=True, text=True
    )
    assert result.returncode == 1 and "FAIL bad" in result.stdout and "httpx" in result.stdout
