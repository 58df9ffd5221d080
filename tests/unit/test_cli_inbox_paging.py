"""The inbox's listings page by `next` (issue 33 item 3): a filtered page reads at most
`FILTERED_READ_BUDGET` items and may hold none with a `next` past what it read, so a listing that reads
"all" (`baton runs pending`, `baton runs questions`' tool approvals) follows it to the end; the web inbox
(`inbox/src/List.jsx`) names the same budget in its "None found in the first N items read"."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from baton.cli import runs
from baton.cli.main import app as cli_app
from baton.pending_query import FILTERED_READ_BUDGET

ROOT = Path(__file__).resolve().parents[2]


def _item(iid: str, kind: str, waited_s: int) -> dict[str, Any]:
    return {
        "id": iid,
        "kind": kind,
        "run_id": "r1",
        "node": "draft",
        "prompt": f"{iid}?",
        "created_at": "2026-01-01T00:00:00Z",
        "waited_s": waited_s,
        "blocks": {"gate": None, "run_id": "r1"},
        "actions": [],
    }


class PagedInbox:
    """GET /api/inbox as a filtered listing serves it: empty pages with a cursor before the items."""

    def __init__(self, pages: list[list[dict[str, Any]]]) -> None:
        self.pages = pages
        self.asked: list[dict[str, Any]] = []

    def request(self, method: str, path: str, *, params: dict[str, Any]) -> dict[str, Any]:
        assert (method, path) == ("GET", "/api/inbox")
        self.asked.append(dict(params))
        at = int(params.get("next", "p0")[1:])
        last = at == len(self.pages) - 1
        items = self.pages[at]
        return {
            "items": items,
            "count": len(items),
            "next": None if last else f"p{at + 1}",
            "as_of": "2026-01-01T00:00:00Z",
        }

    def get_tool_approval(self, run_id: str, iid: str) -> str:
        return f"{run_id}/{iid}"


def test_runs_pending_follows_empty_filtered_pages_to_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    inbox = PagedInbox(
        [[], [], [_item("q1", "question", 90)], [_item("q2", "question", 30), _item("i1", "interrupt", 5)]]
    )
    monkeypatch.setattr("baton.cli.common.client", lambda: inbox)
    out = CliRunner().invoke(cli_app, ["runs", "pending", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == {
        "question": {"pending": 2, "oldest_age_seconds": 90},
        "interrupt": {"pending": 1, "oldest_age_seconds": 5},
    }
    assert [p.get("next") for p in inbox.asked] == [None, "p1", "p2", "p3"]
    assert all(p["order"] == "oldest" and p["limit"] == 200 for p in inbox.asked)


def test_a_runs_tool_approvals_are_read_past_an_empty_filtered_page(monkeypatch: pytest.MonkeyPatch) -> None:
    inbox = PagedInbox([[], [_item("t1", "tool_approval", 3)], [_item("t2", "tool_approval", 1)]])
    monkeypatch.setattr("baton.cli.tool_approval_text.tool_approval_text", lambda view: f"shown {view}")
    assert runs._pending_tool_approvals(inbox, "r1") == ["shown r1/t1", "shown r1/t2"]  # type: ignore[arg-type]
    assert [p.get("next") for p in inbox.asked] == [None, "p1", "p2"]
    assert all(p["kind"] == "tool_approval" and p["run"] == "r1" for p in inbox.asked)


def test_the_web_inbox_names_the_servers_read_budget() -> None:
    source = (ROOT / "inbox" / "src" / "List.jsx").read_text()
    named = re.search(r"^const READ_BUDGET = (\d+);", source, re.MULTILINE)
    assert named is not None and int(named.group(1)) == FILTERED_READ_BUDGET
