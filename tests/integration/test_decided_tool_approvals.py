"""`GET /api/tool-approvals?status=answered` on moto with the real store, through the real resolver: the
decided tool approvals of every run, page by page with a small page (each page one Query of the by_status
index), `since` leaving out older calls, a foreign or forged token refused, and operators only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from baton.api import deps
from baton.api.auth import agent_token
from baton.ids import iso
from tests.integration.resolver import ResolverOnMoto

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[ResolverOnMoto]:
    yield ResolverOnMoto(moto_stack)
    deps.set_services_provider(deps._default_provider)


def _decide(api: ResolverOnMoto, run_id: str, command: str, answer: dict[str, Any]) -> str:
    call = {"tool": "Bash", "arguments": {"command": command}}
    body = {"call": call, "reason": "work", "timeout_seconds": 600, "agent": "coder"}
    status, asked = api.call("POST", f"/api/runs/{run_id}/tool-approvals", body)
    assert status == 201, asked
    iid = asked["interaction_id"]
    status, done = api.call("POST", f"/api/runs/{run_id}/interactions/{iid}/answer", {"answer": answer})
    assert status == 200, done
    return str(iid)


def _all_pages(api: ResolverOnMoto, query: str) -> tuple[list[dict[str, Any]], int]:
    items: list[dict[str, Any]] = []
    pages, token = 0, None
    while True:
        path = f"/api/tool-approvals?{query}" + (f"&next={quote(token)}" if token else "")
        status, page = api.call("GET", path)
        assert status == 200, page
        assert page["count"] == len(page["approvals"]) <= 2
        items += page["approvals"]
        pages += 1
        token = page["next"]
        if token is None:
            return items, pages


def test_decided_approvals_of_every_run_are_listed_page_by_page(api: ResolverOnMoto) -> None:
    old = _decide(api, "run-a", "ls old", {"decision": "deny", "reason": "no"})
    api.clock.advance(3600)
    since = iso(api.clock.now())
    ids = {
        _decide(api, "run-a", "ls", {"decision": "approve"}),
        _decide(api, "run-b", "rm -rf build", {"decision": "deny", "reason": "not today"}),
        _decide(api, "run-c", "make", {"decision": "edit", "arguments": {"command": "make test"}}),
    }
    status, pending = api.call(
        "POST", "/api/runs/run-c/tool-approvals", {"call": {"tool": "Bash", "arguments": {"command": "x"}},
                                                   "reason": "r", "timeout_seconds": 600},
    )  # fmt: skip
    assert status == 201, pending

    listed, pages = _all_pages(api, "status=answered&limit=2")
    assert {a["interaction_id"] for a in listed} == ids | {old}  # never the pending one
    assert pages >= 2
    denied = next(a for a in listed if a["run_id"] == "run-b")
    assert denied["decision"]["decision"] == "deny" and denied["decision"]["decided_by"] == "local-operator"
    assert (
        denied["agent"] == "coder" and denied["tool"] == "Bash" and denied["arguments"] == {"command": "rm -rf build"}
    )

    recent, _ = _all_pages(api, f"since={quote(since)}&limit=2")
    assert {a["interaction_id"] for a in recent} == ids
    later = iso(api.clock.now() + timedelta(days=1))
    status, none = api.call("GET", f"/api/tool-approvals?since={quote(later)}")
    assert status == 200 and none == {"approvals": [], "count": 0, "next": None}


def test_a_page_token_is_bound_to_its_since_and_a_forged_one_is_a_400(api: ResolverOnMoto) -> None:
    for n in range(3):
        _decide(api, f"run-{n}", "ls", {"decision": "approve"})
    status, first = api.call("GET", "/api/tool-approvals?limit=1")
    assert status == 200 and first["count"] == 1 and first["next"], first
    status, err = api.call("GET", f"/api/tool-approvals?limit=1&since=2026-01-01T00:00:00Z&next={first['next']}")
    assert status == 400 and "same since" in err["message"], err
    status, err = api.call("GET", "/api/tool-approvals?next=eyJrIjp7fX0")  # {"k":{}}: not a store position
    assert status == 400 and err["error"] == "bad_request", err


def test_only_an_operator_lists_decided_approvals(api: ResolverOnMoto) -> None:
    _decide(api, "run-a", "ls", {"decision": "approve"})
    status, err = api.call("GET", "/api/tool-approvals", token=agent_token(api.token, "run-a"))
    assert status == 403 and "listing tool approvals" in err["message"], err
