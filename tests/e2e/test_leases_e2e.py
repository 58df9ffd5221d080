"""Claim leases on the local stack (`baton dev` in its own process), as two named operators whose tokens
come from `baton operator-token`: claim with a lease, renew by the other is a 409, a take-over needs a
reason (422 without), release is the holder's, reassignment is recorded, and the CLI, the inbox and
`baton runs pending` show who holds what until when. (A lease running out is tested on the injected
clock: tests/unit/test_leases.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    started = start_local_stack(tmp_path_factory.mktemp("baton-leases") / ".baton")  # `baton` finds it from ..
    yield started
    stop_local_stack(started)


def _baton(stack: LocalStackProcess, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": token or stack.token, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "baton.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=Path(stack.state_dir).parent,
    )


def _token(stack: LocalStackProcess, name: str) -> str:
    minted = _baton(stack, "operator-token", name)
    assert minted.returncode == 0, minted.stderr
    return minted.stdout.strip()


def test_two_operators_claim_renew_take_over_release_and_reassign(stack: LocalStackProcess) -> None:
    alice, bob = _token(stack, "alice"), _token(stack, "bob")
    session = f"lease-{uuid.uuid4().hex[:8]}"
    with stack.http() as http:
        created = http.post("/api/v1/interrupts", json={"sessionId": session, "prompt": "Ship it?"})
        assert created.status_code == 201, created.text
    iid = created.json()["id"]

    claimed = _baton(stack, "workflow", "claim-interrupt", session, "--lease-seconds", "600", token=alice)
    assert claimed.returncode == 0, claimed.stderr
    assert f"interrupt {iid} claimed by alice until " in claimed.stdout and " UTC" in claimed.stdout

    renew = _baton(stack, "workflow", "renew-claim", session, token=bob)
    assert renew.returncode != 0 and "claimed by alice" in renew.stderr
    with stack.http(bob) as http:
        refused = http.post(f"/api/v1/interrupts/{iid}/claim", json={"force": True})
        assert refused.status_code == 422, refused.text
        assert http.post(f"/api/v1/interrupts/{iid}/claim/renew", json={}).status_code == 409
    no_reason = _baton(stack, "workflow", "claim-interrupt", session, "--force", token=bob)
    assert no_reason.returncode == 2 and "--reason" in no_reason.stderr

    taken = _baton(stack, "workflow", "claim-interrupt", session, "--force", "--reason", "alice is away", token=bob)
    assert taken.returncode == 0, taken.stderr
    assert "claimed by bob until" in taken.stdout
    release = _baton(stack, "workflow", "release-claim", session, token=alice)
    assert release.returncode != 0 and "claimed by bob" in release.stderr
    assigned = _baton(stack, "workflow", "reassign-interrupt", session, "--to", "carol", "--reason", "hers", token=bob)
    assert assigned.returncode == 0, assigned.stderr
    assert "claimed by carol until" in assigned.stdout

    shown = _baton(stack, "workflow", "inspect", session)
    assert "claimed:   by carol until " in shown.stdout, shown.stdout
    with stack.http(alice) as http:
        items = http.get("/api/inbox", params={"kind": "interrupt"}).json()["items"]
        mine = next(i for i in items if i["id"] == iid)
        assert mine["claimed_by"] == "carol" and mine["lease_expires_at"]
        events = http.get(f"/api/runs/{session}/events", params={"limit": 100}).json()["events"]
    claims = [(e["type"], e["data"]) for e in events if e["type"].startswith("interrupt_")]
    assert [t for t, _ in claims] == ["interrupt_claimed", "interrupt_claimed", "interrupt_reassigned"]
    assert (claims[0][1]["by"], claims[0][1].get("previous")) == ("alice", None)
    assert claims[1][1] | {"lease_expires_at": None} == {
        "interaction_id": iid,
        "node": claims[1][1]["node"],
        "by": "bob",
        "previous": "alice",
        "reason": "alice is away",
        "lease_expires_at": None,
    }
    assert (claims[2][1]["by"], claims[2][1]["to"], claims[2][1]["previous"]) == ("bob", "carol", "bob")

    released = _baton(stack, "workflow", "release-claim", session, token=_token(stack, "carol"))
    assert released.returncode == 0, released.stderr
    pending = _baton(stack, "runs", "pending")
    assert pending.returncode == 0, pending.stderr
    assert "interrupt: 1 pending, oldest waited " in pending.stdout
