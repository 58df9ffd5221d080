"""Review companion: the Bedrock adapter against stubbed Converse responses, and the offline companion."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from baton.adapters.companion_bedrock import DEFAULT_SYSTEM_PROMPT, REVIEW_TOOL_NAME, BedrockCompanion
from baton.adapters.companion_offline import OfflineCompanion
from baton.domain.companion import CompanionContext, CompanionError, CompanionTurn, ThreadTurn, format_steps
from baton.errors import BatonError, ValidationFailedError
from baton.review_ports import Companion
from baton.runtime.wiring import companion_from_config

pytestmark = pytest.mark.disable_socket

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"

DIFF = """\
diff --git a/src/shop/orders.py b/src/shop/orders.py
index 1111111..2222222 100644
--- a/src/shop/orders.py
+++ b/src/shop/orders.py
@@ -1,3 +1,4 @@
 import decimal
-TAX = 0.2
+TAX = decimal.Decimal("0.2")
+REFUND_WINDOW_DAYS = 30
diff --git a/tests/test_orders.py b/tests/test_orders.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/tests/test_orders.py
@@ -0,0 +1,2 @@
+def test_tax():
+    assert True
"""


def make_ctx(**overrides: Any) -> CompanionContext:
    base: dict[str, Any] = {
        "run_id": "run-1",
        "node": "ship_review",
        "diff_text": DIFF,
        "diff_truncated": False,
        "diff_total_bytes": len(DIFF),
        "files_changed": 2,
        "insertions": 4,
        "deletions": 1,
        "files": ["src/shop/orders.py", "tests/test_orders.py"],
    }
    base.update(overrides)
    return CompanionContext(**base)


# --------------------------------------------------------------------------------------------------
# Bedrock adapter
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


@pytest.fixture
def sent(client: Any) -> Iterator[list[dict[str, Any]]]:
    """Every Converse request's parameters, as the client built them."""
    captured: list[dict[str, Any]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        captured.append(params)

    client.meta.events.register("before-parameter-build.bedrock-runtime.Converse", capture)
    yield captured


def converse_response(content: list[dict[str, Any]], stop_reason: str = "tool_use") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 1834, "outputTokens": 211, "totalTokens": 2045},
        "metrics": {"latencyMs": 2310},
    }


def tool_use(payload: dict[str, Any]) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": REVIEW_TOOL_NAME, "input": payload}}


FIRST_PAYLOAD = {
    "text": "Please verify the tax change with the steps below.",
    "test_steps": ["1. Run `pytest tests/test_orders.py`", "Create an order and check the tax is exact"],
    "verdict": {
        "decision": "approve",
        "confidence": 0.82,
        "blockers": [],
        "summary": "Small, tested change.",
    },
}


def all_text(request: dict[str, Any]) -> str:
    return "\n".join(block["text"] for m in request["messages"] for block in m["content"] if "text" in block)


def test_first_turn_sends_forced_tool_with_diff_and_parses_tool_use(client: Any, sent: list[Any]) -> None:
    companion = BedrockCompanion(client, MODEL)
    with Stubber(client) as stub:
        stub.add_response(
            "converse",
            converse_response([tool_use(FIRST_PAYLOAD)]),
            {
                "modelId": MODEL,
                "system": [{"text": DEFAULT_SYSTEM_PROMPT}],
                "messages": ANY,
                "inferenceConfig": ANY,
                "toolConfig": ANY,
            },
        )
        turn = companion.first_turn(make_ctx())
        stub.assert_no_pending_responses()

    request = sent[0]
    tool_config = request["toolConfig"]
    assert tool_config["toolChoice"] == {"tool": {"name": REVIEW_TOOL_NAME}}
    assert [t["toolSpec"]["name"] for t in tool_config["tools"]] == [REVIEW_TOOL_NAME]
    schema = tool_config["tools"][0]["toolSpec"]["inputSchema"]["json"]
    assert schema["properties"]["verdict"]["properties"]["decision"]["enum"] == [
        "approve",
        "request_changes",
        "needs_discussion",
    ]
    assert request["messages"][0]["role"] == "user"
    assert len(request["messages"]) == 1  # consecutive user blocks are merged into one message
    text = all_text(request)
    assert DIFF in text
    assert "turn 1 of at most 8" in text
    assert "run-1" in text and "ship_review" in text

    assert turn.is_model is True
    assert turn.model == MODEL
    assert turn.text == FIRST_PAYLOAD["text"]
    assert turn.test_steps == [
        "Run `pytest tests/test_orders.py`",
        "Create an order and check the tax is exact",
    ]
    assert turn.verdict is not None
    assert turn.verdict.decision == "approve"
    assert turn.verdict.confidence == pytest.approx(0.82)
    assert turn.stop_reason == "tool_use"
    assert (turn.input_tokens, turn.output_tokens) == (1834, 211)


def test_context_overrides_model_and_system_prompt(client: Any, sent: list[Any]) -> None:
    companion = BedrockCompanion(client, MODEL)
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response([tool_use(FIRST_PAYLOAD)]))
        turn = companion.first_turn(make_ctx(model_id="other-model", system_prompt="Be terse."))
    assert sent[0]["modelId"] == "other-model"
    assert sent[0]["system"] == [{"text": "Be terse."}]
    assert turn.model == "other-model"


def test_reply_sends_thread_and_operator_message_alternating(client: Any, sent: list[Any]) -> None:
    companion = BedrockCompanion(client, MODEL)
    thread = [
        ThreadTurn(role="companion", text="1. Run the tests.", n=0),
        ThreadTurn(role="operator", text="Which tests?", n=1),
        ThreadTurn(role="companion", text="tests/test_orders.py", n=2),
    ]
    payload = {
        "text": "Good, that covers it.",
        "test_steps": ["should be ignored after the first turn"],
        "verdict": {"decision": "approve", "confidence": 0.9, "blockers": [], "summary": "Verified."},
    }
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response([tool_use(payload)]))
        turn = companion.reply(make_ctx(turn_index=3), thread, "They pass locally.")

    messages = sent[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert DIFF in messages[0]["content"][0]["text"]
    last = messages[-1]["content"][0]["text"]
    assert "They pass locally." in last
    assert "turn 3 of at most 8" in last
    assert turn.test_steps == []
    assert turn.verdict is not None and turn.verdict.summary == "Verified."


def test_reply_near_max_turns_demands_a_verdict(client: Any, sent: list[Any]) -> None:
    companion = BedrockCompanion(client, MODEL)
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response([tool_use(FIRST_PAYLOAD)]))
        stub.add_response("converse", converse_response([tool_use(FIRST_PAYLOAD)]))
        companion.reply(make_ctx(turn_index=7, max_turns=8), [], "ok?")
        companion.reply(make_ctx(turn_index=8, max_turns=8), [], "ok?")
    assert "one turn remains" in all_text(sent[0])
    final = all_text(sent[1])
    assert "FINAL turn" in final and "Do not answer needs_discussion" in final


def test_thread_is_capped_to_first_plus_last_turns(client: Any, sent: list[Any]) -> None:
    companion = BedrockCompanion(client, MODEL, max_thread_turns=4)
    thread = [ThreadTurn(role="companion" if i % 2 == 0 else "operator", text=f"turn-{i}", n=i) for i in range(20)]
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response([tool_use(FIRST_PAYLOAD)]))
        companion.reply(make_ctx(), thread, "latest")
    text = all_text(sent[0])
    kept = re.findall(r"turn-(\d+)", text)
    assert kept == ["0", "16", "17", "18", "19"]
    assert "[15 earlier dialogue turns omitted]" in text
    roles = [m["role"] for m in sent[0]["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))


def test_text_only_answer_falls_back_without_verdict(client: Any) -> None:
    companion = BedrockCompanion(client, MODEL)
    content = [{"text": "Here is how to test:\n1. Run the unit tests\n2. Place an order\nThat is all."}]
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response(content, stop_reason="end_turn"))
        turn = companion.first_turn(make_ctx())
    assert turn.verdict is None
    assert turn.text.startswith("Here is how to test:")
    assert turn.test_steps == ["Run the unit tests", "Place an order"]
    assert turn.stop_reason == "end_turn"


def test_verdict_tolerates_percent_confidence_and_flat_payload(client: Any) -> None:
    companion = BedrockCompanion(client, MODEL)
    flat = {
        "text": "hm",
        "decision": "changes_requested",
        "confidence": 70,
        "blockers": ["x"],
        "summary": "s",
    }
    bad = {"text": "odd", "verdict": {"decision": "maybe", "confidence": 0.5, "blockers": [], "summary": ""}}
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response([tool_use(flat)]))
        stub.add_response("converse", converse_response([tool_use(bad)]))
        flat_turn = companion.reply(make_ctx(), [], "?")
        bad_turn = companion.reply(make_ctx(), [], "?")
    assert flat_turn.verdict is not None
    assert flat_turn.verdict.decision == "request_changes"
    assert flat_turn.verdict.confidence == pytest.approx(0.7)
    assert bad_turn.verdict is None and bad_turn.text == "odd"


def test_empty_answer_is_an_error(client: Any) -> None:
    companion = BedrockCompanion(client, MODEL)
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response([], stop_reason="max_tokens"))
        with pytest.raises(CompanionError, match="max_tokens"):
            companion.first_turn(make_ctx())


@pytest.mark.parametrize(
    ("code", "retryable"),
    [
        ("ThrottlingException", True),
        ("ValidationException", False),
        ("AccessDeniedException", False),
        ("ModelNotReadyException", True),
        ("ResourceNotFoundException", False),
    ],
)
def test_bedrock_errors_map_to_companion_unavailable(client: Any, code: str, retryable: bool) -> None:
    companion = BedrockCompanion(client, MODEL)
    with Stubber(client) as stub:
        stub.add_client_error("converse", service_error_code=code, service_message="nope", http_status_code=400)
        with pytest.raises(CompanionError) as info:
            companion.reply(make_ctx(), [], "hello")
    err = info.value
    assert isinstance(err, BatonError)
    assert err.code == "companion_unavailable"
    assert code in err.message and "nope" in err.message
    assert err.details == {"bedrock_error": code, "model_id": MODEL, "retryable": retryable}
    assert err.to_body()["error"] == "companion_unavailable"


def test_oversized_diff_is_clipped(client: Any, sent: list[Any]) -> None:
    companion = BedrockCompanion(client, MODEL, max_diff_chars=100)
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response([tool_use(FIRST_PAYLOAD)]))
        companion.first_turn(make_ctx(diff_text="x" * 5000))
    text = all_text(sent[0])
    assert "x" * 100 in text and "x" * 101 not in text
    assert "TRUNCATED" in text


# --------------------------------------------------------------------------------------------------
# Offline companion
# --------------------------------------------------------------------------------------------------


def test_offline_first_turn_is_deterministic_and_numbered() -> None:
    companion = OfflineCompanion()
    first = companion.first_turn(make_ctx())
    again = companion.first_turn(make_ctx())
    assert first == again
    assert first.is_model is False and first.model == "offline"
    assert "not a language model" in first.text
    assert first.test_steps
    assert format_steps(first.test_steps) in first.text
    for i, step in enumerate(first.test_steps, start=1):
        assert f"\n{i}. {step}" in first.text
        assert not re.match(r"^\d+[.)]", step)
    joined = "\n".join(first.test_steps)
    assert "`pytest tests/test_orders.py`" in joined
    assert "`src/shop/orders.py` (+2/-1)" in joined
    assert first.verdict is not None
    assert first.verdict.decision == "approve"
    assert first.verdict.confidence == pytest.approx(0.9)
    assert first.verdict.blockers == []


def test_offline_no_tests_and_truncation_lower_confidence() -> None:
    companion = OfflineCompanion()
    source_only = DIFF.split("diff --git a/tests")[0]
    no_tests = companion.first_turn(make_ctx(diff_text=source_only, files=["src/shop/orders.py"]))
    assert no_tests.verdict is not None
    assert no_tests.verdict.decision == "approve"
    assert no_tests.verdict.confidence == pytest.approx(0.7)
    assert any("No test file changed" in s for s in no_tests.test_steps)

    truncated = companion.first_turn(
        make_ctx(
            diff_text=source_only,
            diff_truncated=True,
            diff_total_bytes=900_000,
            files=["src/shop/orders.py", "src/shop/payments.py"],
        )
    )
    assert truncated.verdict is not None
    assert truncated.verdict.confidence == pytest.approx(0.45)
    assert truncated.verdict.decision == "needs_discussion"
    assert "truncated" in truncated.test_steps[0] and "`src/shop/payments.py`" in truncated.test_steps[0]
    assert "900000 bytes" in truncated.text

    # on the final turn the offline companion converges instead of asking for discussion
    final = companion.reply(
        make_ctx(diff_text=source_only, diff_truncated=True, files=["src/shop/orders.py"], turn_index=8),
        [],
        "anything else?",
    )
    assert final.verdict is not None and final.verdict.decision == "approve"


def test_offline_blockers_conflict_markers_and_todo() -> None:
    diff = DIFF + (
        "diff --git a/src/shop/cart.py b/src/shop/cart.py\n"
        "--- a/src/shop/cart.py\n+++ b/src/shop/cart.py\n@@ -1 +1,5 @@\n"
        "+<<<<<<< HEAD\n+a = 1\n+=======\n+a = 2\n+>>>>>>> feature\n"
        "diff --git a/src/shop/util.py b/src/shop/util.py\n"
        "--- a/src/shop/util.py\n+++ b/src/shop/util.py\n@@ -1 +1 @@\n"
        "+# TODO: handle refunds\n"
        "diff --git a/docs/guide.rst b/docs/guide.rst\n"
        "--- a/docs/guide.rst\n+++ b/docs/guide.rst\n@@ -1 +1,2 @@\n+Title\n+=======\n"
    )
    turn = OfflineCompanion().first_turn(make_ctx(diff_text=diff))
    verdict = turn.verdict
    assert verdict is not None
    assert verdict.decision == "request_changes"
    assert verdict.confidence == pytest.approx(0.9)
    assert any("cart.py" in b and "2 added conflict marker" in b for b in verdict.blockers)
    assert any("util.py" in b and "TODO" in b for b in verdict.blockers)
    assert not any("guide.rst" in b for b in verdict.blockers)  # a heading underline is not a conflict
    assert "flagged lines" in turn.test_steps[0]


def test_offline_empty_diff_is_a_blocker() -> None:
    turn = OfflineCompanion().first_turn(make_ctx(diff_text="", files=[], files_changed=0))
    assert turn.verdict is not None
    assert turn.verdict.decision == "request_changes"
    assert "nothing to merge" in turn.verdict.blockers[0]


def test_offline_reply_relates_files_and_follows_operator_reports() -> None:
    companion = OfflineCompanion()
    ctx = make_ctx(turn_index=2)
    first = companion.first_turn(make_ctx())
    thread = [ThreadTurn(role="companion", text=first.text, n=0)]

    about = companion.reply(ctx, thread, "How is the tax on orders computed?")
    assert "`src/shop/orders.py`" in about.text.split("\n\n")[1]
    assert "not a language model" in about.text
    assert format_steps(first.test_steps) in about.text
    assert about.test_steps == []
    assert about.verdict is not None and about.verdict.decision == "approve"
    assert about == companion.reply(ctx, thread, "How is the tax on orders computed?")

    unrelated = companion.reply(ctx, thread, "What about the weather?")
    assert "No changed file matches" in unrelated.text

    failed = companion.reply(ctx, thread, "test_tax fails with a decimal error")
    assert failed.verdict is not None
    assert failed.verdict.decision == "request_changes"
    assert failed.verdict.confidence == pytest.approx(0.8)
    assert "operator reported a problem" in failed.verdict.blockers[0]

    later = [
        *thread,
        ThreadTurn(role="operator", text="it fails", n=1),
        ThreadTurn(role="companion", text="..", n=2),
    ]
    fixed = companion.reply(make_ctx(turn_index=3), later, "re-ran it, all tests pass now")
    assert fixed.verdict is not None
    assert fixed.verdict.decision == "approve"
    assert fixed.verdict.confidence == pytest.approx(0.95)


# --------------------------------------------------------------------------------------------------
# Factory
# --------------------------------------------------------------------------------------------------


def test_factory(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}.items():
        monkeypatch.setenv(name, value)
    offline = companion_from_config("offline")
    assert isinstance(offline, OfflineCompanion)
    assert isinstance(offline, Companion)
    bedrock = companion_from_config("bedrock", client=client, model_id=MODEL, max_thread_turns=3)
    assert isinstance(bedrock, BedrockCompanion) and bedrock.max_thread_turns == 3
    built = companion_from_config("Bedrock", model_id=MODEL, region_name="us-east-1")
    assert isinstance(built, BedrockCompanion)
    with pytest.raises(ValidationFailedError):
        companion_from_config("bedrock", client=client)
    with pytest.raises(ValidationFailedError):
        companion_from_config("gpt")
    with pytest.raises(ValidationFailedError):
        companion_from_config("offline", model_id=MODEL)


def test_turn_model_roundtrips() -> None:
    turn = OfflineCompanion().first_turn(make_ctx())
    assert CompanionTurn.model_validate_json(turn.model_dump_json()) == turn


def test_prompt_and_tool_schema_are_data_that_match_the_contract(client: Any) -> None:
    """The prompt and the tool schema live in adapters/companion_prompt.md and companion_tool.json."""
    from baton.domain.companion import DECISIONS

    request = BedrockCompanion(client, MODEL).build_request(make_ctx(), [("user", "hi")])
    assert request["system"] == [{"text": DEFAULT_SYSTEM_PROMPT}] and REVIEW_TOOL_NAME in DEFAULT_SYSTEM_PROMPT
    schema = request["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]
    assert tuple(schema["properties"]["verdict"]["properties"]["decision"]["enum"]) == DECISIONS
