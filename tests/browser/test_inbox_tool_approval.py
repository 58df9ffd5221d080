"""A tool approval in the inbox, in Chromium (issue 30): it is listed under its kind, its page shows the
command and the other arguments, a deny without a reason is refused, an edit the tool's schema refuses
shows the server's 422 at the argument, and an approve with "remember for this run" settles it (the API
then says approved, with the grant); in the list, r denies only with a reason. Opening one claims it (an
advisory claim, as an interrupt's page does); another operator's claim shows with a take-over. A decision a
policy rule made is named in words: the rule and the policy's version, not the raw `policy:<rule>`. Under a
shadow policy the page says what it would have decided, and whether the person's decision agrees."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from baton.api.auth import operator_token
from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall
from baton.policy.engine import Policy
from tests.browser.conftest import LIVE_SECONDS, agent, shoot, sign_in
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack

SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "maxLength": 60}, "timeout": {"type": "integer", "maximum": 600}},
    "required": ["command"],
}
COMMAND = "rm -rf build/ && make release"


def test_a_person_decides_a_tool_call_in_the_inbox(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-tool-{uuid.uuid4().hex[:8]}"
    call = ToolCall(tool="Bash", arguments={"command": COMMAND, "timeout": 120}, arguments_schema=SCHEMA)
    request = ToolApprovalRequest(
        call=call, risk="high", reason="clean the build before the release", timeout_seconds=600, session="s1"
    )
    asked = agent(stack, run_id).request_tool_approval(run_id, request)

    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    row = page.locator(f'[data-item-id="{asked.interaction_id}"]')
    expect(row).to_be_visible(timeout=LIVE_SECONDS * 1000)
    expect(row).to_contain_text("tool_approval")
    page.get_by_role("combobox", name="Filter by kind").select_option("tool_approval")
    expect(row).to_be_visible()
    shoot(page, "tool-approval-list")
    row.get_by_role("link", name=re.compile("Bash")).click()

    expect(page.get_by_role("heading", name="Run Bash?")).to_be_visible()
    expect(page.get_by_label("Command")).to_contain_text(COMMAND)
    expect(page.get_by_label("Arguments", exact=True)).to_contain_text("timeout")
    expect(page.get_by_label("Tool approval status")).to_contain_text("high risk")
    expect(page.get_by_label("Tool approval status")).to_contain_text(f"digest {asked.digest[:12]}")
    expect(page.get_by_label("The agent's reason")).to_have_text("clean the build before the release")
    expect(page.get_by_role("note")).to_contain_text("the call is denied")
    shoot(page, "tool-approval")

    # A deny needs a reason (the model reads it): without one, the button does nothing.
    page.get_by_role("button", name="Deny…").click()
    deny = page.get_by_role("button", name="Deny", exact=True)
    expect(deny).to_be_disabled()
    assert stack.client().get_tool_approval(run_id, asked.interaction_id).status == "pending"

    # An edit the tool's schema refuses: the server's 422 is shown at the argument it names.
    page.get_by_role("button", name="Edit & approve…").click()
    page.get_by_label("Arguments (JSON)").fill('{"command": "make release", "timeout": 9000}')
    expect(page.get_by_label("Argument changes")).to_contain_text("120 → 9000")
    page.get_by_role("button", name="Approve the edited call").click()
    expect(page.get_by_role("alert")).to_contain_text("timeout")
    shoot(page, "tool-approval-edit-422")
    assert stack.client().get_tool_approval(run_id, asked.interaction_id).status == "pending"

    page.get_by_label("Also allow this tool").select_option("run")  # remember: a grant for the run, 8 hours
    page.get_by_label("for", exact=True).select_option("28800")
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(page.get_by_role("status", name="Decision")).to_contain_text("Approved by local-operator")
    view = stack.client().get_tool_approval(run_id, asked.interaction_id)
    assert view.status == "answered" and view.decision is not None and view.decision.decision == "approve"
    assert view.decision.arguments == {"command": COMMAND, "timeout": 120}
    remembered = view.decision.remember
    assert remembered is not None and (remembered.scope, remembered.expires_in_seconds) == ("run", 28800)
    shoot(page, "tool-approval-approved")


def test_the_list_keys_deny_a_tool_call_only_with_a_reason(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-tool-keys-{uuid.uuid4().hex[:8]}"
    call = ToolCall(tool="Bash", arguments={"command": "git push --force"})
    request = ToolApprovalRequest(call=call, reason="publish the fix", timeout_seconds=600)
    asked = agent(stack, run_id).request_tool_approval(run_id, request)
    page.goto(f"{stack.api_url}/inbox/#/")
    page.get_by_role("textbox", name="Filter by run").fill(run_id)
    expect(page.locator("li.item")).to_have_count(1, timeout=LIVE_SECONDS * 1000)
    page.locator("h1").click()  # keys go to the page, not to the filter field

    page.once("dialog", lambda dialog: dialog.dismiss())  # no reason: nothing is sent
    page.keyboard.press("r")
    page.wait_for_timeout(300)
    assert stack.client().get_tool_approval(run_id, asked.interaction_id).status == "pending"

    page.once("dialog", lambda dialog: dialog.accept("not on main"))
    page.keyboard.press("r")
    expect(page.locator(f'[data-settled-id="{asked.interaction_id}"]')).to_be_visible(timeout=LIVE_SECONDS * 1000)
    view = stack.client().get_tool_approval(run_id, asked.interaction_id)
    assert view.decision is not None and (view.decision.decision, view.decision.reason) == ("deny", "not on main")


def test_a_decision_made_elsewhere_shows_on_the_open_page(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-tool-else-{uuid.uuid4().hex[:8]}"
    request = ToolApprovalRequest(
        call=ToolCall(tool="Write", arguments={"path": "a.md"}), reason="notes", timeout_seconds=600
    )
    asked = agent(stack, run_id).request_tool_approval(run_id, request)
    page.goto(f"{stack.api_url}/inbox/#/tool/{run_id}/{asked.interaction_id}")
    expect(page.get_by_label("Arguments", exact=True)).to_contain_text("a.md")
    stack.client().answer(run_id, asked.interaction_id, {"decision": "deny", "reason": "not now"})  # the CLI, Slack
    decision = page.get_by_role("status", name="Decision")
    expect(decision).to_have_text("Denied by local-operator: not now.", timeout=LIVE_SECONDS * 1000)
    expect(page.get_by_role("button", name="Approve", exact=True)).to_have_count(0)


def test_a_decision_by_a_policy_rule_names_the_rule_and_its_version(stack: LocalStackProcess, page: Page) -> None:
    run_id = f"ui-tool-policy-{uuid.uuid4().hex[:8]}"
    request = ToolApprovalRequest(
        call=ToolCall(tool="Bash", arguments={"command": "ls"}), reason="list", timeout_seconds=600
    )
    asked = agent(stack, run_id).request_tool_approval(run_id, request)
    # The local stack runs without a policy: the approval is read as the API sends one a rule allowed
    # (tests/integration/test_tool_approval_policy.py holds the server to that shape).
    decision = {
        "decision": "approve",
        "reason": "reading is safe",
        "digest": asked.digest,
        "decided_by": "policy:read-only",
        "outcome": "policy",
        "rule": "read-only",
        "policy_version": "sha256:0123456789abcdef",
    }

    def decided_by_policy(route: Route) -> None:
        response = route.fetch()
        body = {**response.json(), "status": "answered", "decision": decision}
        route.fulfill(response=response, json=body)

    page.route(f"**/api/runs/{run_id}/tool-approvals/{asked.interaction_id}*", decided_by_policy)
    page.goto(f"{stack.api_url}/inbox/#/tool/{run_id}/{asked.interaction_id}")
    expect(page.get_by_role("status", name="Decision")).to_have_text(
        "Approved. Decided by policy rule read-only (version sha256:0123456789abcdef): reading is safe.",
        timeout=LIVE_SECONDS * 1000,
    )
    expect(page.get_by_role("status", name="Decision")).not_to_contain_text("policy:read-only")
    expect(page.get_by_role("button", name="Approve", exact=True)).to_have_count(0)


def test_opening_an_approval_claims_it_and_another_operators_claim_is_taken_over(
    stack: LocalStackProcess, page: Page
) -> None:
    run_id = f"ui-tool-claim-{uuid.uuid4().hex[:8]}"
    request = ToolApprovalRequest(
        call=ToolCall(tool="Write", arguments={"path": "b.md"}), reason="notes", timeout_seconds=600
    )
    free = agent(stack, run_id).request_tool_approval(run_id, request)
    page.goto(f"{stack.api_url}/inbox/#/tool/{run_id}/{free.interaction_id}")
    expect(page.get_by_text("Claimed by you (local-operator) until")).to_be_visible()  # claimed on open
    assert stack.client().get_tool_approval(run_id, free.interaction_id).claimed_by == "local-operator"

    other = ToolApprovalRequest(
        call=ToolCall(tool="Write", arguments={"path": "c.md"}), reason="notes", timeout_seconds=600
    )
    held = agent(stack, run_id).request_tool_approval(run_id, other)
    alice = {"Authorization": f"Bearer {operator_token(stack.token, 'alice')}"}
    claimed = httpx.post(
        f"{stack.api_url}/api/runs/{run_id}/tool-approvals/{held.interaction_id}/claim", headers=alice, json={}
    )
    assert claimed.status_code == 200, claimed.text
    page.goto(f"{stack.api_url}/inbox/#/tool/{run_id}/{held.interaction_id}")
    banner = page.get_by_role("alert").filter(has_text="Claimed by alice")
    expect(banner).to_be_visible()
    shoot(page, "tool-approval-claimed")
    assert (
        stack.client().get_tool_approval(run_id, held.interaction_id).claimed_by == "alice"
    )  # opening did not take it
    expect(banner.get_by_role("button", name="Take over")).to_be_disabled()  # a take-over needs a reason
    banner.get_by_label("Reason to take over").fill("alice is away")
    banner.get_by_role("button", name="Take over").click()
    expect(page.get_by_text("Claimed by you (local-operator) until")).to_be_visible()
    assert stack.client().get_tool_approval(run_id, held.interaction_id).claimed_by == "local-operator"


SHADOW_POLICY = """
@id("read-only")
@reason("reading is safe")
permit(principal, action == Action::"call_tool", resource in Tool::"Bash")
when { resource.hasTag("command") && resource.getTag("command") like "ls*" };

@id("staging-ok")
permit(principal, action == Action::"pass_gate", resource == Gate::"deploy");
"""


def test_a_shadow_policy_shows_what_it_would_have_decided_and_whether_a_person_agreed(
    browser: Browser, tmp_path: Path
) -> None:
    policy_file = tmp_path / "shadow.cedar"
    policy_file.write_text(SHADOW_POLICY)
    shadow = start_local_stack(tmp_path / "state", "--policy", str(policy_file), "--policy-mode", "shadow")
    try:
        run_id = f"ui-tool-shadow-{uuid.uuid4().hex[:8]}"
        listing = ToolApprovalRequest(
            call=ToolCall(tool="Bash", arguments={"command": "ls -la"}), reason="look", timeout_seconds=600
        )
        denied = agent(shadow, run_id).request_tool_approval(run_id, listing)
        assert denied.status == "pending"  # shadow: the rule's allow is logged, a person decides as before
        version = Policy.load(SHADOW_POLICY).version
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        page = sign_in(shadow, context)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{shadow.api_url}/inbox/#/tool/{run_id}/{denied.interaction_id}")
        line = page.get_by_label("Shadow policy")
        expect(line).to_have_text(f"Shadow policy (version {version}) would have: allow, by rule read-only.")
        page.get_by_role("button", name="Deny…").click()
        page.get_by_label("Reason (the model sees it)").fill("not in this directory")
        page.get_by_role("button", name="Deny", exact=True).click()
        expect(page.get_by_role("status", name="Decision")).to_contain_text("Denied by local-operator")
        expect(line).to_have_text(
            f"Shadow policy (version {version}) would have: allow, by rule read-only. Differs from the decision."
        )
        shoot(page, "tool-approval-shadow-differs")

        again = ToolApprovalRequest(
            call=ToolCall(tool="Bash", arguments={"command": "ls src"}), reason="look", timeout_seconds=600
        )
        approved = agent(shadow, run_id).request_tool_approval(run_id, again)
        page.goto(f"{shadow.api_url}/inbox/#/tool/{run_id}/{approved.interaction_id}")
        page.get_by_role("button", name="Approve", exact=True).click()
        expect(page.get_by_role("status", name="Decision")).to_contain_text("Approved by local-operator")
        expect(page.get_by_label("Shadow policy")).to_have_text(
            f"Shadow policy (version {version}) would have: allow, by rule read-only. Agrees."
        )

        # An interrupt that declares its action: the line says what the shadow policy would have decided.
        gated = {"name": "deploy", "arguments": {"env": "staging"}, "onAllow": "go", "onDeny": "stop"}
        body = {"sessionId": run_id, "prompt": "Deploy?", "timeoutMs": 600_000, "action": gated}
        with shadow.http() as http:
            created = http.post("/api/v1/interrupts", json=body)
        assert created.status_code == 201 and created.json()["status"] == "pending", created.text
        page.goto(f"{shadow.api_url}/inbox/#/interrupt/{created.json()['id']}")
        expect(page.get_by_label("Shadow policy")).to_have_text(
            f"Shadow policy (version {version}) would have: allow, by rule staging-ok."
        )
        shoot(page, "interrupt-shadow")
        context.close()
        assert not errors, f"the page threw: {errors}"
    finally:
        stop_local_stack(shadow)


def test_a_high_risk_approve_asks_for_the_passkey_added_in_the_header(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Passkeys on (BATON_WEBAUTHN_RP_ID=localhost, the inbox at http://localhost:<port>): Chromium's virtual
    authenticator (DevTools' WebAuthn domain) registers a passkey from the header's Passkeys, then the Approve
    of a high risk call is refused for want of one, confirmed by it, and recorded as webauthn-verified."""
    local = start_local_stack(tmp_path_factory.mktemp("baton-passkeys"), env={"BATON_WEBAUTHN_RP_ID": "localhost"})
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    try:
        base = local.api_url.replace("127.0.0.1", "localhost")  # an IP is no WebAuthn relying party
        minted = httpx.post(f"{local.api_url}/inbox/login-code", headers={"Authorization": f"Bearer {local.token}"})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(minted.json()["url"].replace(local.api_url, base))
        page.wait_for_url(re.compile(r"/inbox/(#.*)?$"))
        cdp = context.new_cdp_session(page)
        cdp.send("WebAuthn.enable")
        authenticator = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True}
        authenticator |= {"hasUserVerification": True, "isUserVerified": True, "automaticPresenceSimulation": True}
        cdp.send("WebAuthn.addVirtualAuthenticator", {"options": authenticator})

        page.get_by_role("button", name="Passkeys (0)").click()
        page.get_by_role("textbox", name="Name").fill("virtual key")
        page.get_by_role("button", name="Add a passkey").click()
        panel = page.get_by_role("region", name="Passkeys")
        expect(panel).to_contain_text("virtual key")
        page.get_by_role("button", name="Passkeys (1)").click()  # closed
        expect(panel).to_be_hidden()
        # no shoot() until the approve: its accessibility session's detach ends the virtual authenticator

        run_id = f"ui-tool-passkey-{uuid.uuid4().hex[:8]}"
        request = ToolApprovalRequest(
            call=ToolCall(tool="Bash", arguments={"command": COMMAND}), risk="high", reason="ship", timeout_seconds=600
        )
        asked = agent(local, run_id).request_tool_approval(run_id, request)
        page.set_viewport_size({"width": 1366, "height": 900})
        page.goto(f"{base}/inbox/#/tool/{run_id}/{asked.interaction_id}")
        page.get_by_role("button", name="Approve", exact=True).click()
        expect(page.get_by_role("status", name="Decision")).to_contain_text("Approved by local-operator")
        answered = [e for e in local.client().events(run_id).events if e.type == "interaction_answered"]
        assert [e.data.get("second_factor") for e in answered] == ["webauthn"]
        page.get_by_role("button", name="Passkeys (1)").click()
        expect(panel).to_contain_text("last used")
        shoot(page, "tool-approval-passkey")
        assert not errors, f"the page threw: {errors}"
    finally:
        context.close()
        stop_local_stack(local)
