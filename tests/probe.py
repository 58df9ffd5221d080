"""A Python probe in a fresh interpreter: what importing or running something loads, measured where no
test has imported anything yet. The probe gets `argv` as JSON in `sys.argv[1]` and prints its report as
one JSON line last."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_probe(script: str, argv: list[str]) -> tuple[dict[str, Any], str]:
    """Run `script` with `argv` (no API URL or token inherited from the caller's shell); its report and stderr."""
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k not in ("BATON_API_URL", "BATON_TOKEN")},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr
