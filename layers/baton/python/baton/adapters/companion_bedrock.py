"""The review companion on Amazon Bedrock: the Converse API with one forced tool (`submit_review`), so
the answer comes back structured (text, test steps, verdict). Any Bedrock failure becomes a
`CompanionError` (`companion_unavailable`). The client is injected (`baton/runtime/wiring.py` builds it).

The system prompt and the tool's schema are data beside this module: `companion_prompt.md` and
`companion_tool.json` (shipped with the package: the wheel and the layer asset copy the folder as is).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from baton.domain.companion import CompanionError, CompanionTurn, Verdict, clip_text, format_steps
from baton.errors import ValidationFailedError

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime.client import BedrockRuntimeClient

    from baton.domain.companion import CompanionContext, ThreadTurn

__all__ = ["DEFAULT_SYSTEM_PROMPT", "REVIEW_TOOL_NAME", "BedrockCompanion"]

_DATA = resources.files("baton.adapters")
DEFAULT_SYSTEM_PROMPT = _DATA.joinpath("companion_prompt.md").read_text(encoding="utf-8").rstrip("\n")
_TOOL_SPEC: dict[str, Any] = json.loads(_DATA.joinpath("companion_tool.json").read_text(encoding="utf-8"))
REVIEW_TOOL_NAME = str(_TOOL_SPEC["name"])


def _convergence_note(ctx: CompanionContext) -> str:
    """The turn budget instruction; the dialogue must trend to a verdict, never loop."""
    where = f"This is companion turn {ctx.turn_index} of at most {ctx.max_turns}."
    if ctx.is_final_turn:
        return (
            f"{where} It is the FINAL turn: you must give a decisive verdict now — approve or "
            "request_changes. Do not answer needs_discussion and do not ask further questions."
        )
    if ctx.turns_remaining == 1:
        return (
            f"{where} Only one turn remains after this one: converge. Give your best decisive verdict "
            "unless one essential fact is still unknown, and if so ask only for that fact."
        )
    return (
        f"{where} Every turn must move the review toward a verdict; ask only follow-up questions whose "
        "answer could change the verdict."
    )


_RETRYABLE = frozenset(
    {
        "ThrottlingException",
        "ModelNotReadyException",
        "ModelTimeoutException",
        "ServiceUnavailableException",
        "InternalServerException",
    }
)

_ERROR_HINTS: Mapping[str, str] = {
    "ThrottlingException": "Bedrock is throttling requests; try the reply again shortly",
    "ValidationException": "Bedrock rejected the request (model id, tool use support or input size)",
    "AccessDeniedException": "access to the model is denied; enable model access and check IAM",
    "ResourceNotFoundException": "the model was not found in this region",
    "ModelNotReadyException": "the model is not ready yet; try again shortly",
    "ModelTimeoutException": "the model took too long to answer",
    "ModelErrorException": "the model failed while answering",
    "ServiceUnavailableException": "Bedrock is temporarily unavailable",
    "InternalServerException": "Bedrock had an internal error",
}

_NUMBER_PREFIX = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")
_NUMBERED_LINE = re.compile(r"^\s*\d+[.)]\s+(.+?)\s*$")


class BedrockCompanion:
    """Companion backed by a Bedrock model through the Converse API (client injected, never created here).

    Bounds on what is sent: the diff is clipped to ``max_diff_chars`` (it is normally bounded already),
    the thread keeps its first turn (the test instructions) plus the last ``max_thread_turns`` turns,
    and each message is clipped to ``max_message_chars``.
    """

    def __init__(
        self,
        client: BedrockRuntimeClient,
        model_id: str,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        *,
        max_tokens: int = 2048,
        temperature: float = 0.2,
        max_thread_turns: int = 12,
        max_message_chars: int = 8_000,
        max_diff_chars: int = 200_000,
    ) -> None:
        if not model_id:
            raise ValidationFailedError("a Bedrock companion needs a model id", details={"path": "model_id"})
        self._client = client
        self.model_id = model_id
        self.system_prompt = system_prompt
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_thread_turns = max_thread_turns
        self.max_message_chars = max_message_chars
        self.max_diff_chars = max_diff_chars

    # -- port -------------------------------------------------------------------------------------

    def first_turn(self, ctx: CompanionContext) -> CompanionTurn:
        task = (
            "Write the numbered test instructions for the operator and your initial verdict, by calling "
            f"{REVIEW_TOOL_NAME}.\n\n{_convergence_note(ctx)}"
        )
        messages = [("user", self._context_block(ctx)), ("user", task)]
        return self._converse(ctx, messages, first=True)

    def reply(self, ctx: CompanionContext, thread: list[ThreadTurn], operator_message: str) -> CompanionTurn:
        messages: list[tuple[str, str]] = [("user", self._context_block(ctx))]
        for turn in self._bounded_thread(thread):
            if isinstance(turn, str):
                messages.append(("user", turn))
            else:
                role = "assistant" if turn.role == "companion" else "user"
                messages.append((role, clip_text(turn.text, self.max_message_chars)))
        message = clip_text(operator_message.strip(), self.max_message_chars) or "(empty message)"
        messages.append(
            (
                "user",
                f"Operator's message:\n{message}\n\n"
                f"Answer the operator and update your verdict by calling {REVIEW_TOOL_NAME} "
                f"(leave test_steps empty).\n\n{_convergence_note(ctx)}",
            )
        )
        return self._converse(ctx, messages, first=False)

    # -- request building -------------------------------------------------------------------------

    def _context_block(self, ctx: CompanionContext) -> str:
        diff = ctx.diff_text
        truncated = ctx.diff_truncated
        if len(diff) > self.max_diff_chars:
            diff, truncated = diff[: self.max_diff_chars], True
        files = "\n".join(f"- {path}" for path in ctx.files[:200]) or "- (none listed)"
        if len(ctx.files) > 200:
            files += f"\n- … and {len(ctx.files) - 200} more"
        note = (
            f"NOTE: the diff below is TRUNCATED (full size {ctx.diff_total_bytes} bytes); some changes are "
            "not shown. Say so and have the operator check the unseen files."
            if truncated
            else "The diff below is complete."
        )
        return (
            f"Review gate for run {ctx.run_id}, node {ctx.node}.\n"
            f"Diff stats: {ctx.files_changed} files changed, +{ctx.insertions} / -{ctx.deletions} lines.\n"
            f"Changed files:\n{files}\n\n{note}\n\n<diff>\n{diff}\n</diff>"
        )

    def _bounded_thread(self, thread: Sequence[ThreadTurn]) -> list[ThreadTurn | str]:
        ordered = sorted(thread, key=lambda t: t.n)
        if len(ordered) <= self.max_thread_turns + 1:
            return list(ordered)
        tail = ordered[-self.max_thread_turns :] if self.max_thread_turns > 0 else []
        omitted = len(ordered) - 1 - len(tail)
        return [ordered[0], f"[{omitted} earlier dialogue turns omitted]", *tail]

    @staticmethod
    def _alternate(messages: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
        """Converse needs user/assistant alternation starting with user: merge neighbours of one role."""
        out: list[dict[str, Any]] = []
        for role, text in messages:
            if not text:
                continue
            if out and out[-1]["role"] == role:
                out[-1]["content"].append({"text": text})
            else:
                out.append({"role": role, "content": [{"text": text}]})
        if out and out[0]["role"] != "user":
            out.insert(0, {"role": "user", "content": [{"text": "(review context unavailable)"}]})
        return out

    def build_request(self, ctx: CompanionContext, messages: Iterable[tuple[str, str]]) -> dict[str, Any]:
        return {
            "modelId": ctx.model_id or self.model_id,
            "system": [{"text": ctx.system_prompt or self.system_prompt}],
            "messages": self._alternate(messages),
            "inferenceConfig": {"maxTokens": self.max_tokens, "temperature": self.temperature},
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": REVIEW_TOOL_NAME,
                            "description": str(_TOOL_SPEC["description"]),
                            "inputSchema": {"json": _TOOL_SPEC["inputSchema"]},
                        }
                    }
                ],
                "toolChoice": {"tool": {"name": REVIEW_TOOL_NAME}},
            },
        }

    # -- call + parse -----------------------------------------------------------------------------

    def _converse(self, ctx: CompanionContext, messages: Iterable[tuple[str, str]], *, first: bool) -> CompanionTurn:
        request = self.build_request(ctx, messages)
        model = str(request["modelId"])
        try:
            response: Mapping[str, Any] = self._client.converse(**request)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code") or "Unknown")
            detail = str(error.get("Message") or "")
            hint = _ERROR_HINTS.get(code, "Bedrock returned an error")
            raise CompanionError(
                f"review companion unavailable: {hint} ({code}: {detail})".rstrip(),
                details={"bedrock_error": code, "model_id": model, "retryable": code in _RETRYABLE},
            ) from exc
        except BotoCoreError as exc:
            raise CompanionError(
                f"review companion unavailable: could not reach Bedrock ({exc})",
                details={"bedrock_error": type(exc).__name__, "model_id": model, "retryable": True},
            ) from exc
        return self._parse(response, model=model, first=first)

    @staticmethod
    def _parse(response: Mapping[str, Any], *, model: str, first: bool) -> CompanionTurn:
        content = response.get("output", {}).get("message", {}).get("content", []) or []
        texts = [str(block["text"]) for block in content if block.get("text")]
        tool_inputs = [
            block["toolUse"].get("input")
            for block in content
            if "toolUse" in block and block["toolUse"].get("name") == REVIEW_TOOL_NAME
        ]
        usage = response.get("usage") or {}
        common: dict[str, Any] = {
            "model": model,
            "is_model": True,
            "stop_reason": response.get("stopReason"),
            "input_tokens": usage.get("inputTokens"),
            "output_tokens": usage.get("outputTokens"),
        }
        payload = next((i for i in tool_inputs if isinstance(i, Mapping)), None)
        if payload is not None:
            text = str(payload.get("text") or "").strip() or "\n\n".join(texts).strip()
            steps = _clean_steps(payload.get("test_steps")) if first else []
            verdict = _parse_verdict(payload.get("verdict", payload))
            if text or steps or verdict:
                if not text and steps:
                    text = format_steps(steps)
                return CompanionTurn(text=text, test_steps=steps, verdict=verdict, **common)
        text = "\n\n".join(texts).strip()
        if not text:
            raise CompanionError(
                f"review companion unavailable: the model returned no usable answer "
                f"(stopReason {response.get('stopReason')})",
                details={"bedrock_error": "EmptyResponse", "model_id": model, "retryable": True},
            )
        steps = _steps_from_text(text) if first else []
        return CompanionTurn(text=text, test_steps=steps, verdict=None, **common)


def _clean_steps(raw: Any) -> list[str]:
    if not isinstance(raw, list):
        return []
    steps = [_NUMBER_PREFIX.sub("", str(step)).strip() for step in raw]
    return [step for step in steps if step]


def _steps_from_text(text: str) -> list[str]:
    """Best effort for a text-only answer: its numbered lines are the steps."""
    return [m.group(1) for line in text.splitlines() if (m := _NUMBERED_LINE.match(line))]


def _parse_verdict(raw: Any) -> Verdict | None:
    """Accept the nested ``verdict`` object (or a flat payload); tolerate a percent confidence."""
    if not isinstance(raw, Mapping) or "decision" not in raw:
        return None
    data = dict(raw)
    decision = str(data.get("decision", "")).strip().lower().replace(" ", "_").replace("-", "_")
    data["decision"] = {"approved": "approve", "changes_requested": "request_changes"}.get(decision, decision)
    confidence = data.get("confidence")
    if isinstance(confidence, int | float) and 1 < confidence <= 100:
        data["confidence"] = confidence / 100
    blockers = data.get("blockers")
    data["blockers"] = [str(b) for b in blockers] if isinstance(blockers, list) else []
    data["summary"] = str(data.get("summary") or "")
    try:
        return Verdict.model_validate(
            {k: data[k] for k in ("decision", "confidence", "blockers", "summary") if k in data}
        )
    except ValidationError:
        return None
