"""Schemathesis against the served OpenAPI of the local stack (`baton dev` in its own process).

Bounded here (`FUZZ_MAX_EXAMPLES` per operation, a time budget) so it fits the normal test run;
`make fuzz` runs more examples and every phase. Asserted, by every Schemathesis check: no 5xx; every
response's status code, content type, headers and body conform to what the spec declares; a request the
document allows is not refused, one it forbids is (tests/e2e/schemathesis.toml lists what a schema
cannot say); an undeclared method is a 405."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import LocalStackProcess

# Every check runs (Schemathesis' default: no --checks, which would override the per-operation config),
# the positive- and negative-data acceptance checks included; what a schema cannot say is narrowed per
# operation in CONFIG, each with its reason.
CONFIG = Path(__file__).with_name("schemathesis.toml")


def run_schemathesis(stack: LocalStackProcess, *extra: str) -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).with_name("schemathesis")
    return subprocess.run(
        [
            str(cli),
            "--config-file",
            str(CONFIG),
            "run",
            f"{stack.api_url}/api/openapi.json",
            "-H",
            f"Authorization: Bearer {stack.token}",
            "--request-timeout",
            "30",
            "--no-color",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
        check=False,
    )


@pytest.mark.timeout(600)
def test_bounded_fuzz_finds_no_5xx_and_nothing_off_spec(local_stack: LocalStackProcess) -> None:
    examples = os.environ.get("FUZZ_MAX_EXAMPLES", "15")
    result = run_schemathesis(
        local_stack,
        "--max-examples",
        examples,
        "--phases",
        "examples,fuzzing",
        "--workers",
        "2",
        "--seed",
        "18",
    )
    tail = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, tail
    assert "passed" in result.stdout, tail
