"""With no API configured, every client command prints one readable line and exits non-zero (no traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from baton.cli.main import app

COMMANDS = [
    ["runs", "start", "human_pause"],
    ["runs", "show", "r1"],
    ["runs", "events", "r1"],
    ["runs", "questions", "r1"],
    ["runs", "answer", "r1", "i1", "yes"],
    ["resume", "--run-id", "r1", "--answer", "ok=true"],
    ["review", "show", "r1"],
    ["workflow", "inspect", "s1"],
    ["workflow", "resume-interrupt", "s1", "--input", '"x"'],
    ["workflow", "claim-interrupt", "s1"],
    ["workflow", "cancel-interrupt", "s1", "--reason", "no"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_no_api_configured_is_one_readable_error(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("BATON_API_URL", "BATON_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no .baton/local.json here or above
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert "no Baton API configured" in result.output, result.output
