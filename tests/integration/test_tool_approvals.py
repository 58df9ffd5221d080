"""Tool-call approvals (issue 30) on moto with the real store, through the real resolver: a repeat finds
the same approval, approve / deny / edit (422 at the field for bad edited arguments), consume once and
only for the approved digest (409 that says why), the default deny taken at the deadline, a remembered
grant answering a later call at once, and its revocation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from baton.api import deps
from baton.api.auth import operator_token
from baton.domain.approval import ApprovalPolicy
from baton.domain.ballot import Voter
from baton.domain.tool_calls import ToolCall
from baton.services.approvals import ApprovalService, Entry
from tests.integration.resolver import ResolverOnMoto

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

TOKEN = "local-secret"
RUN = "tools-1"
SCHEMA = {"type": "object", "properties": {"path": {"type": "string", "maxLength": 12}}, "required": ["path"]}


class Api(ResolverOnMoto):
    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)

    def ask(self, arguments: dict[str, Any], **more: Any) -> tuple[int, Any]:
        call = {"tool": "write_file", "arguments": arguments, "arguments_schema": SCHEMA}
        body = {"call": call, "reason": "save the notes", "timeout_seconds": 60, "session": "s1", **more}
        return self.call("POST", f"/api/runs/{RUN}/tool-approvals", body)

    def answer(self, approval_id: str, answer: Any, *, by: str | None = None) -> tuple[int, Any]:
        token = operator_token(TOKEN, by) if by else TOKEN
        return self.call("POST", f"/api/runs/{RUN}/interactions/{approval_id}/answer", {"answer": answer}, token=token)

    def consume(self, approval_id: str, digest: str) -> tuple[int, Any]:
        return self.call("POST", f"/api/runs/{RUN}/tool-approvals/{approval_id}/consume", {"digest": digest})

    def get(self, approval_id: str) -> Any:
        status, view = self.call("GET", f"/api/runs/{RUN}/tool-approvals/{approval_id}")
        assert status == 200, view
        return view


def digest_of(arguments: dict[str, Any]) -> str:
    return ToolCall(tool="write_file", arguments=arguments, arguments_schema=SCHEMA).digest


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def test_a_repeat_finds_the_same_approval_and_the_inbox_lists_it(api: Api) -> None:
    status, first = api.ask({"path": "notes.md"})
    assert status == 201 and first["status"] == "pending" and first["digest"] == digest_of({"path": "notes.md"})
    status, again = api.ask({"path": "notes.md"})
    assert (status, again["interaction_id"]) == (200, first["interaction_id"])
    status, other = api.ask({"path": "notes.md"}, session="s2")  # another session asks for itself
    assert status == 201 and other["interaction_id"] != first["interaction_id"]
    status, page = api.call("GET", f"/api/inbox?kind=tool_approval&run={RUN}")
    assert status == 200 and {i["id"] for i in page["items"]} == {first["interaction_id"], other["interaction_id"]}
    item = next(i for i in page["items"] if i["id"] == first["interaction_id"])
    assert item["kind"] == "tool_approval" and "write_file" in item["prompt"] and "notes.md" in item["prompt"]
    assert item["actions"][0] == {
        "name": "answer",
        "method": "POST",
        "path": f"/api/runs/{RUN}/interactions/{first['interaction_id']}/answer",
    }


def test_an_edit_is_validated_at_the_field_and_binds_the_edited_call_once(api: Api) -> None:
    _, asked = api.ask({"path": "notes.md"})
    approval = asked["interaction_id"]
    status, refused = api.answer(approval, {"decision": "edit", "arguments": {"path": "a-much-too-long-name.md"}})
    assert status == 422 and refused["path"] == "answer.arguments.path", refused
    status, refused = api.answer(approval, {"decision": "edit"})
    assert status == 422 and refused["path"] == "answer", refused
    edited = {"path": "safe.md"}
    status, answered = api.answer(approval, {"decision": "edit", "arguments": edited, "reason": "not there"})
    assert status == 200 and answered["status"] == "answered", answered
    view = api.get(approval)
    assert view["decision"]["decision"] == "edit" and view["decision"]["arguments"] == edited
    assert view["decision"]["digest"] == digest_of(edited) and view["decision"]["decided_by"] == "local-operator"
    status, refused = api.consume(approval, digest_of({"path": "notes.md"}))  # the original call: not approved
    assert status == 409 and refused["reason"] == "digest_mismatch" and "another call" in refused["message"]
    status, consumed = api.consume(approval, digest_of(edited))
    assert status == 200 and consumed["arguments"] == edited
    status, refused = api.consume(approval, digest_of(edited))
    assert status == 409 and refused["reason"] == "consumed" and "already used" in refused["message"]
    assert api.get(approval)["consumed"] is True
    status, refused = api.answer(approval, {"decision": "deny"})
    assert status == 409, refused


def test_a_denial_never_consumes_and_a_second_answer_is_a_409(api: Api) -> None:
    _, asked = api.ask({"path": "notes.md"})
    approval = asked["interaction_id"]
    assert api.answer(approval, {"decision": "deny", "reason": "not today"})[0] == 200
    assert api.answer(approval, {"decision": "deny", "reason": "not today"})[0] == 200  # the same answer again
    status, refused = api.answer(approval, {"decision": "approve"})
    assert status == 409, refused
    status, refused = api.consume(approval, digest_of({"path": "notes.md"}))
    assert status == 409 and refused["reason"] == "denied"
    assert api.get(approval)["decision"]["reason"] == "not today"


def test_unanswered_at_the_deadline_the_default_deny_is_taken_and_recorded(api: Api) -> None:
    _, asked = api.ask({"path": "notes.md"})
    approval = asked["interaction_id"]
    api.clock.advance(61)
    status, refused = api.consume(approval, digest_of({"path": "notes.md"}))
    assert status == 409 and refused["reason"] == "denied"  # the consume's read took the default first
    view = api.get(approval)
    assert view["status"] == "answered" and view["decision"]["outcome"] == "timed_out_default"
    assert view["decision"]["decision"] == "deny" and view["decision"]["decided_by"] is None
    types = [e.type for e in api.core.store.list_events(RUN, limit=100)]
    assert "timed_out_default" in types
    status, late = api.answer(approval, {"decision": "approve"})
    assert status == 410, late


def test_a_declared_approve_default_binds_the_asked_call(api: Api) -> None:
    _, asked = api.ask({"path": "notes.md"}, on_timeout={"default": {"decision": "approve"}})
    api.clock.advance(61)
    assert api.get(asked["interaction_id"])["decision"]["outcome"] == "timed_out_default"
    assert api.consume(asked["interaction_id"], digest_of({"path": "notes.md"}))[0] == 200
    status, refused = api.ask({"path": "x.md"}, on_timeout={"default": {"decision": "edit", "arguments": {}}})
    # An edit is no default: the request's own schema refuses it at the field.
    assert status == 422 and any(p["path"].endswith("default.decision") for p in refused["problems"]), refused


def test_a_remembered_grant_answers_a_later_call_until_revoked(api: Api) -> None:
    _, asked = api.ask({"path": "notes.md"})
    remember = {"scope": "run", "expires_in_seconds": 600, "constraint": {"properties": {"path": {"pattern": "md$"}}}}
    assert api.answer(asked["interaction_id"], {"decision": "approve", "remember": remember})[0] == 200
    assert api.consume(asked["interaction_id"], digest_of({"path": "notes.md"}))[0] == 200
    status, granted = api.ask({"path": "todo.md"}, session="s9")
    assert status == 201 and granted["status"] == "answered", granted
    assert granted["decision"]["outcome"] == "grant" and granted["decision"]["grant_id"] == asked["interaction_id"]
    assert api.consume(granted["interaction_id"], digest_of({"path": "todo.md"}))[0] == 200
    assert api.ask({"path": "todo.txt"})[1]["status"] == "pending"  # outside the constraint: a person decides
    status, grants = api.call("GET", f"/api/runs/{RUN}/tool-grants")
    assert status == 200 and [g["grant_id"] for g in grants["grants"]] == [asked["interaction_id"]]
    assert grants["grants"][0]["tool"] == "write_file" and grants["grants"][0]["scope"] == "run"
    status, revoked = api.call("DELETE", f"/api/runs/{RUN}/tool-grants/{asked['interaction_id']}")
    assert status == 200 and revoked["revoked_by"] == "local-operator"
    # The revoke is a decision, chained in the run's decision log with who revoked which grant.
    audit = api.call("GET", f"/api/runs/{RUN}/audit")[1]
    (record,) = [r for r in audit["records"] if r["type"] == "tool_grant_revoked"]
    assert record["data"] == {
        "grant_id": asked["interaction_id"],
        "tool": record["data"]["tool"],
        "by": "local-operator",
    }
    assert api.call("GET", f"/api/runs/{RUN}/audit/verify")[1]["valid"] is True
    assert api.call("GET", f"/api/runs/{RUN}/tool-grants")[1]["grants"] == []
    assert api.ask({"path": "more.md"})[1]["status"] == "pending"
    assert api.call("DELETE", f"/api/runs/{RUN}/tool-grants/{asked['interaction_id']}")[0] == 404


def test_a_grant_expires(api: Api) -> None:
    _, asked = api.ask({"path": "notes.md"})
    remember = {"scope": "session", "expires_in_seconds": 30}
    assert api.answer(asked["interaction_id"], {"decision": "approve", "remember": remember})[0] == 200
    assert api.ask({"path": "b.md"})[1]["status"] == "answered"  # same session
    assert api.ask({"path": "c.md"}, session="s2")[1]["status"] == "pending"  # a session grant: not another's
    api.clock.advance(31)
    assert api.ask({"path": "d.md"})[1]["status"] == "pending"


def test_the_reconcilers_pass_takes_the_default_of_an_approval_nobody_reads(api: Api, moto_stack: MotoStack) -> None:
    _, asked = api.ask({"path": "notes.md"})
    _, answered = api.ask({"path": "other.md"})
    assert api.answer(answered["interaction_id"], {"decision": "approve"})[0] == 200
    assert moto_stack.services.reconciler.reconcile().defaults == []  # not due yet
    api.clock.advance(61)
    report = moto_stack.services.reconciler.reconcile()
    assert report.wire()["defaults"] == [{"run_id": RUN, "interaction_id": asked["interaction_id"]}]
    stored = api.core.store.get_interaction(RUN, asked["interaction_id"])
    assert stored is not None and stored.state.outcome == "timed_out_default"
    assert stored.state.answer["decision"] == "deny"
    status, page = api.call("GET", f"/api/inbox?kind=tool_approval&run={RUN}")
    assert status == 200 and page["items"] == []


def test_a_quorum_approval_is_decided_by_the_vote_that_meets_it(api: Api) -> None:
    _, asked = api.ask({"path": "notes.md"}, approval={"approvals": 2})
    approval = asked["interaction_id"]
    status, refused = api.answer(approval, {"decision": "approve"})  # the requester may not vote
    assert status == 403, refused
    status, first = api.answer(approval, {"decision": "approve"}, by="alice")
    assert status == 200 and first["status"] == "pending" and first["approval"]["approvals"] == 1, first
    assert api.get(approval)["status"] == "pending"
    status, second = api.answer(approval, {"decision": "edit", "arguments": {"path": "n.md"}}, by="bob")
    assert status == 200 and second["status"] == "answered", second
    view = api.get(approval)
    assert view["decision"]["decision"] == "edit" and view["decision"]["decided_by"] == "alice, bob"
    assert api.consume(approval, digest_of({"path": "n.md"}))[0] == 200
    _, denied = api.ask({"path": "x.md"}, approval={"approvals": 2})
    assert (
        api.answer(denied["interaction_id"], {"decision": "deny", "reason": "no"}, by="carol")[1]["status"]
        == "answered"
    )
    assert api.get(denied["interaction_id"])["decision"]["reason"] == "no"  # one rejection rejects (rule "any")


def test_a_met_tally_a_crash_left_unsettled_is_decided_by_the_reconcilers_pass(api: Api, moto_stack: MotoStack) -> None:
    _, asked = api.ask({"path": "notes.md"}, approval={"approvals": 1})
    approval = asked["interaction_id"]
    pending = api.core.store.get_interaction(RUN, approval)
    assert pending is not None
    policy = ApprovalPolicy(approvals=1)
    text = json.dumps({"decision": "approve"})
    ApprovalService(api.core).cast(pending, policy, Entry(text, "approve", "local-operator"), Voter("alice"))
    assert api.get(approval)["status"] == "pending"  # the vote is stored, its settle never ran
    report = moto_stack.services.reconciler.reconcile()
    assert report.wire()["quorums"] == [{"run_id": RUN, "interaction_id": approval, "kind": "quorum"}]
    view = api.get(approval)
    assert view["decision"]["decision"] == "approve" and view["decision"]["decided_by"] == "alice"
