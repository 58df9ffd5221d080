"""An agent's state kept with its run (issue 30) on moto with the real store, through the real resolver:
the run's own agent and an operator read and write it, another run's agent is refused; absent is 404;
a write on a moved version is a 409 naming the current one (of 50 racers on one version, one wins); over
the bound is 413; a bad key is 400; the item lives in the run's partition and never in its snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from baton.api import deps
from baton.api.auth import agent_token
from baton.contracts.agent_state import MAX_AGENT_STATE_BYTES
from baton.models import RunSummary
from baton.workflows.table import TTL_ATTRIBUTE
from tests.integration.racing import call_api, operator, race
from tests.integration.resolver import ResolverOnMoto

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

TOKEN = "local-secret"
RUN, OTHER = "state-1", "state-2"
PATH = f"/api/runs/{RUN}/agent-state/openai-agents.s1"


class Api(ResolverOnMoto):
    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)
        for run in (RUN, OTHER):
            now = self.core.now()
            self.core.store.create_run(RunSummary(run_id=run, status="running", created_at=now, updated_at=now))


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def test_the_runs_agent_keeps_reads_and_deletes_its_state(api: Api) -> None:
    agent = agent_token(TOKEN, RUN)
    assert api.call("GET", PATH, token=agent)[0] == 404
    status, written = api.call("PUT", PATH, {"state": '{"turn": 1}'}, token=agent)
    assert status == 200 and written["version"] == 1 and written["key"] == "openai-agents.s1", written
    assert set(written) == {"run_id", "key", "version", "updated_at"}
    status, written = api.call("PUT", PATH, {"state": '{"turn": 2}', "version": 1}, token=agent)
    assert status == 200 and written["version"] == 2, written
    status, kept = api.call("GET", PATH, token=agent)
    assert status == 200 and kept["state"] == '{"turn": 2}' and kept["version"] == 2 and kept["run_id"] == RUN
    assert api.call("GET", PATH)[1] == kept  # an operator reads it too
    assert api.call("DELETE", PATH, token=agent) == (200, {"run_id": RUN, "key": "openai-agents.s1", "deleted": True})
    assert api.call("DELETE", PATH, token=agent)[1]["deleted"] is False
    assert api.call("GET", PATH, token=agent)[0] == 404


def test_another_runs_agent_may_not_touch_it(api: Api) -> None:
    assert api.call("PUT", PATH, {"state": "mine"})[0] == 200
    other = agent_token(TOKEN, OTHER)
    for method, body in (("GET", None), ("PUT", {"state": "theirs"}), ("DELETE", None)):
        status, refused = api.call(method, PATH, body, token=other)
        assert status == 403 and refused["error"] == "forbidden", (method, refused)
    assert api.call("GET", PATH)[1]["state"] == "mine"


def test_a_write_on_a_moved_version_is_a_409_naming_the_current_one(api: Api) -> None:
    assert api.call("PUT", PATH, {"state": "a", "version": 0})[1]["version"] == 1
    status, conflict = api.call("PUT", PATH, {"state": "b", "version": 0})  # 0: only if none is kept
    assert status == 409 and conflict["version"] == 1 and conflict["error"] == "conflict", conflict
    assert api.call("PUT", PATH, {"state": "b", "version": 1})[1]["version"] == 2
    status, conflict = api.call("PUT", PATH, {"state": "c", "version": 1})
    assert status == 409 and conflict["version"] == 2, conflict
    assert api.call("GET", PATH)[1]["state"] == "b"


def test_of_racers_writing_over_one_version_exactly_one_wins(api: Api, moto_stack: MotoStack) -> None:
    assert api.call("PUT", PATH, {"state": "base"})[0] == 200
    results = race(lambda n: call_api(moto_stack, operator(n), "PUT", PATH, {"state": f"racer-{n}", "version": 1}))
    won = [body for status, body in results if status == 200]
    assert len(won) == 1 and won[0]["version"] == 2, results
    assert all(status == 409 and body["version"] == 2 for status, body in results if status != 200)
    kept = api.call("GET", PATH)[1]
    assert kept["version"] == 2 and kept["state"].startswith("racer-")


def test_a_state_over_the_bound_is_413_and_at_the_bound_is_kept(api: Api) -> None:
    status, refused = api.call("PUT", PATH, {"state": "x" * (MAX_AGENT_STATE_BYTES + 1)})
    assert status == 413 and refused["max_bytes"] == MAX_AGENT_STATE_BYTES, refused
    assert api.call("GET", PATH)[0] == 404
    status, written = api.call("PUT", PATH, {"state": "é" * (MAX_AGENT_STATE_BYTES // 2)})  # bytes, not characters
    assert status == 200, written
    assert len(api.call("GET", PATH)[1]["state"]) == MAX_AGENT_STATE_BYTES // 2


@pytest.mark.parametrize("key", ["-lead", "has%20space", "a%2Fb", "k" * 129, "%C3%A9"])
def test_a_bad_key_is_400(api: Api, key: str) -> None:
    status, refused = api.call("PUT", f"/api/runs/{RUN}/agent-state/{key}", {"state": "s"})
    assert status == 400 and "agent-state key" in refused["message"], refused
    assert api.call("GET", f"/api/runs/{RUN}/agent-state/{key}")[0] == 400


@pytest.mark.parametrize("version", [False, True, "1"])
def test_a_version_that_is_not_a_number_is_422_and_writes_nothing(api: Api, version: object) -> None:
    # pydantic's lax mode read `false` as 0: the fuzz's "schema-violating request accepted"
    status, refused = api.call("PUT", PATH, {"state": "a", "version": version})
    assert status == 422 and refused["error"] == "validation_failed", refused
    assert api.call("GET", PATH)[0] == 404


def test_no_state_is_kept_for_a_run_baton_does_not_know(api: Api) -> None:
    status, refused = api.call("PUT", "/api/runs/nobody/agent-state/k", {"state": "s"})
    assert status == 404 and refused["run_id"] == "nobody", refused


def test_the_state_lives_in_the_runs_partition_and_not_in_its_snapshot(api: Api, moto_stack: MotoStack) -> None:
    assert api.call("PUT", PATH, {"state": "s" * 1000})[0] == 200
    table = moto_stack.services.settings.table_name
    item = moto_stack.clients["dynamodb"].get_item(
        TableName=table, Key={"PK": {"S": f"RUN#{RUN}"}, "SK": {"S": "AGENT#openai-agents.s1"}}
    )["Item"]
    assert item["record"]["S"] == "agent_state" and TTL_ATTRIBUTE in item  # expires with the run's records
    snapshot = api.core.store.snapshot_run(RUN)
    assert "s" * 1000 not in repr(snapshot)
