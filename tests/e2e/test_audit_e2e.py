"""The decision log end to end: decisions on the local stack verify clean with `baton audit verify`,
export as JSON Lines; then a record edited in the stack's saved table (stop, edit local-data.json,
restart) is named by `baton audit verify`, which exits 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack

if TYPE_CHECKING:
    from pathlib import Path

RUN = "audit-e2e"


def _baton(stack: LocalStackProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token}
    return subprocess.run(
        [sys.executable, "-m", "baton.cli.main", "audit", *args], capture_output=True, text=True, env=env, timeout=60
    )


def _decide(stack: LocalStackProcess) -> None:
    client = stack.client()
    asked = client.ask_async(RUN, "draft", "Which database?", options=["postgres", "dynamodb"])
    client.answer(RUN, asked.interaction_id, "postgres")
    interrupt = client.create_interrupt(session_id=RUN, prompt="Deploy?", state={"env": "dev"})
    client.claim_interrupt(interrupt.interrupt_id)
    client.resume_interrupt(interrupt.interrupt_id, "yes", state_edits=["env=prod"])


def _tamper(data_file: Path, seq: int) -> str:
    """Change the `data` of the chained record at `seq` in the saved table (its event item and its
    AUD#<seq> copy, the decision log's pages); returns its event id."""
    saved = json.loads(data_file.read_text(encoding="utf-8"))
    items = [i for i in saved["items"] if i.get("seq", {}).get("N") == str(seq) and "event_id" in i]
    assert sorted(i["SK"]["S"][:4] for i in items) == ["AUD#", "EVT#"], items
    for item in items:
        data: dict[str, Any] = json.loads(item["data"]["S"])
        item["data"]["S"] = json.dumps({**data, "by": "mallory"})
    data_file.write_text(json.dumps(saved), encoding="utf-8")
    return str(items[0]["event_id"]["S"])


def test_decisions_verify_clean_then_a_tampered_record_is_named(tmp_path: Path) -> None:
    state_dir = tmp_path / "dev"
    stack = start_local_stack(state_dir)
    try:
        _decide(stack)
        clean = _baton(stack, "verify", RUN)
        assert clean.returncode == 0 and "valid" in clean.stdout and "3 decision records" in clean.stdout, clean
        as_json = json.loads(_baton(stack, "verify", RUN, "--json").stdout)
        assert as_json["valid"] is True and as_json["head_seq"] == 3
        out = tmp_path / "decisions.jsonl"
        exported = _baton(stack, "export", RUN, "--output", str(out))
        assert exported.returncode == 0, exported
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [(r["seq"], r["type"]) for r in lines] == [
            (1, "interaction_answered"),
            (2, "interrupt_claimed"),
            (3, "interrupt_resumed"),
        ]
        assert lines[1]["prev_hash"] == lines[0]["hash"] and lines[2]["data"]["state_edits"] == ["env=prod"]
    finally:
        assert stop_local_stack(stack) == 0
    event_id = _tamper(state_dir / "local-data.json", 2)
    stack = start_local_stack(state_dir)
    try:
        tampered = _baton(stack, "verify", RUN)
        assert tampered.returncode == 1, tampered
        assert "seq: 2" in tampered.stderr and event_id in tampered.stderr and "problem: hash" in tampered.stderr
        verdict = json.loads(_baton(stack, "verify", RUN, "--json").stdout)
        assert verdict["valid"] is False and verdict["first_mismatch"]["event_id"] == event_id
        assert verdict["first_mismatch"]["stored"] == lines[1]["hash"] != verdict["first_mismatch"]["expected"]
    finally:
        stop_local_stack(stack)
