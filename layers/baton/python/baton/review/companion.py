"""The review companion: the voice that guides an operator through testing a change before it merges.

A review gate pauses a run on its diff. The companion reads a bounded diff, writes numbered test
instructions for the operator plus an initial verdict, then answers the operator turn by turn. The
dialogue is capped by ``max_turns`` and must converge on a verdict (approve / request changes) rather
than loop; the verdict is advice — the gate's posture decides whether a human must still click.

Two adapters implement the :class:`Companion` port:

* :class:`BedrockCompanion` — Amazon Bedrock's Converse API with one forced tool (``submit_review``)
  so the answer comes back structured (text, test steps, verdict). Any Bedrock failure becomes a
  :class:`CompanionError` (``companion_unavailable``).
* :class:`OfflineCompanion` — deterministic, no model, no network. It derives the steps and the verdict
  from the diff with simple documented heuristics and says plainly that it is not a model.

The diff arrives as plain inputs (text + stats) in :class:`CompanionContext`, so this module does not
depend on how the diff was produced or bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, Field, ValidationError

from baton.errors import BatonError, ValidationFailedError

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime.client import BedrockRuntimeClient

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "REVIEW_TOOL_NAME",
    "BedrockCompanion",
    "Companion",
    "CompanionContext",
    "CompanionError",
    "CompanionTurn",
    "Decision",
    "OfflineCompanion",
    "ThreadTurn",
    "Verdict",
    "companion_from_config",
    "format_steps",
]

Decision = Literal["approve", "request_changes", "needs_discussion"]
DECISIONS: tuple[Decision, ...] = ("approve", "request_changes", "needs_discussion")


# --------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------


class CompanionContext(BaseModel):
    """Everything a companion needs for one turn. The diff is already bounded by the caller."""

    run_id: str
    node: str
    diff_text: str = ""
    diff_truncated: bool = False
    diff_total_bytes: int = Field(default=0, ge=0, description="size of the full diff before bounding")
    files_changed: int = Field(default=0, ge=0)
    insertions: int = Field(default=0, ge=0)
    deletions: int = Field(default=0, ge=0)
    files: list[str] = Field(default_factory=list, description="paths of every changed file")
    system_prompt: str | None = Field(default=None, description="overrides the adapter's system prompt")
    model_id: str | None = Field(default=None, description="overrides the adapter's model id")
    max_turns: int = Field(default=8, ge=1, description="dialogue backstop: the last companion turn")
    turn_index: int = Field(default=1, ge=1, description="number of the companion turn being produced (1 = first)")

    @property
    def turns_remaining(self) -> int:
        """Companion turns left after this one (0 on the final turn, never negative)."""
        return max(0, self.max_turns - self.turn_index)

    @property
    def is_final_turn(self) -> bool:
        return self.turn_index >= self.max_turns


class ThreadTurn(BaseModel):
    """One message of the stored dialogue. ``n`` orders the thread."""

    role: Literal["companion", "operator"]
    text: str
    n: int = Field(ge=0)


class Verdict(BaseModel):
    """The companion's structured judgement; routes the gate downstream."""

    decision: Decision
    confidence: float = Field(ge=0.0, le=1.0)
    blockers: list[str] = Field(default_factory=list)
    summary: str = ""


class CompanionTurn(BaseModel):
    """What the companion said this turn.

    ``test_steps`` holds the numbered test instructions (position = number, no number prefix) and is
    only filled on the first turn. ``verdict`` is ``None`` when a model answered without the
    structured tool call. ``is_model`` tells a UI whether a language model wrote the text.
    """

    text: str
    test_steps: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    model: str
    is_model: bool
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class CompanionError(BatonError):
    """The companion could not produce a turn (model throttled, refused, misconfigured, unreachable)."""

    code = "companion_unavailable"
    http_status = 503


def format_steps(steps: Sequence[str]) -> str:
    """Render test steps as a numbered list, one per line."""
    return "\n".join(f"{i}. {step}" for i, step in enumerate(steps, start=1))


# --------------------------------------------------------------------------------------------------
# Port
# --------------------------------------------------------------------------------------------------


@runtime_checkable
class Companion(Protocol):
    """The review companion port."""

    def first_turn(self, ctx: CompanionContext) -> CompanionTurn:
        """Read the bounded diff; return numbered test steps for the operator and an initial verdict."""
        ...

    def reply(self, ctx: CompanionContext, thread: list[ThreadTurn], operator_message: str) -> CompanionTurn:
        """Answer ``operator_message`` (not yet in ``thread``); converge on a verdict near max_turns."""
        ...


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


# --------------------------------------------------------------------------------------------------
# Bedrock adapter
# --------------------------------------------------------------------------------------------------

REVIEW_TOOL_NAME = "submit_review"

DEFAULT_SYSTEM_PROMPT = """\
You are the review companion of a human-in-the-loop merge gate. An AI agent has finished a change and \
a human operator must verify it before it is merged. You cannot run anything yourself: your job is to \
guide the operator.

On the first turn, read the diff and write precise, numbered test instructions the operator can follow \
(commands to run, screens or endpoints to exercise, edge cases to try, what the expected result is). \
Base every step on the diff; do not invent files. If the diff was truncated, say which parts you could \
not see and ask the operator to check them.

On later turns, answer the operator's message directly, update your judgement with what they report, \
and ask at most one focused follow-up question.

Always answer by calling the submit_review tool, with:
- text: your message to the operator (plain, concise, no greeting);
- test_steps: the numbered test instructions, without the numbers (first turn only; empty afterwards);
- verdict: decision (approve | request_changes | needs_discussion), confidence between 0 and 1, \
blockers (concrete problems that must be fixed before merging; empty when there are none), and a \
one-sentence summary.

The dialogue has a fixed turn budget and must converge: as the budget runs out, stop asking and \
commit to approve or request_changes. Never approve with open blockers."""


def _review_tool_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The message shown to the operator."},
            "test_steps": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Ordered test instructions without number prefixes; first turn only.",
            },
            "verdict": {
                "type": "object",
                "properties": {
                    "decision": {"type": "string", "enum": list(DECISIONS)},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "blockers": {"type": "array", "items": {"type": "string"}},
                    "summary": {"type": "string"},
                },
                "required": ["decision", "confidence", "blockers", "summary"],
            },
        },
        "required": ["text", "verdict"],
    }


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


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n…[clipped {len(text) - limit} characters]"


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
                messages.append((role, _clip(turn.text, self.max_message_chars)))
        message = _clip(operator_message.strip(), self.max_message_chars) or "(empty message)"
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
                            "description": "Submit your message, test steps and verdict for this turn.",
                            "inputSchema": {"json": _review_tool_schema()},
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


# --------------------------------------------------------------------------------------------------
# Offline adapter
# --------------------------------------------------------------------------------------------------

_DEP_FILES = frozenset(
    {
        "pyproject.toml",
        "uv.lock",
        "poetry.lock",
        "pipfile",
        "pipfile.lock",
        "setup.py",
        "setup.cfg",
        "package.json",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "go.mod",
        "go.sum",
        "cargo.toml",
        "cargo.lock",
        "gemfile",
        "gemfile.lock",
    }
)
_DOC_SUFFIXES = frozenset({".md", ".rst", ".adoc", ".txt"})
_TODO = re.compile(r"\b(TODO|FIXME|XXX)\b")
_CONFLICT = re.compile(r"^(<{7}|>{7})(\s|$)")
_WORD = re.compile(r"[A-Za-z0-9]{3,}")
_FAILURE = re.compile(
    r"\b(fail|fails|failed|failing|failure|broken|breaks|crash|crashes|crashed|error|errors|bug|wrong|"
    r"regression|doesn'?t work|does not work|not working)\b",
    re.IGNORECASE,
)
_SUCCESS = re.compile(
    r"\b(pass|passes|passed|passing|works|worked|lgtm|looks good|all good|green|verified)\b", re.IGNORECASE
)
_STOPWORDS = frozenset(
    {"the", "and", "for", "with", "this", "that", "what", "does", "did", "why", "how", "are", "was", "you",
     "can", "should", "there", "file", "files", "change", "changes", "test", "tests", "about", "from"}
)  # fmt: skip
_MAX_FILE_STEPS = 15
_LARGE_CHANGE_LINES = 800


class _FileChange(BaseModel):
    path: str
    added: int = 0
    removed: int = 0
    new: bool = False
    deleted: bool = False
    in_diff: bool = False
    todo_lines: list[str] = Field(default_factory=list)
    conflict_markers: int = 0


def _kind(path: str) -> Literal["test", "deps", "docs", "infra", "source"]:
    p = PurePosixPath(path.lower())
    name, parts = p.name, p.parts[:-1]
    if (
        any(part in {"test", "tests", "__tests__", "spec", "specs"} for part in parts)
        or name.startswith("test_")
        or p.stem.endswith("_test")
        or ".test." in name
        or ".spec." in name
    ):
        return "test"
    if name in _DEP_FILES or name.startswith("requirements"):
        return "deps"
    if p.suffix in _DOC_SUFFIXES or "docs" in parts:
        return "docs"
    if (
        any(part in {"infra", "statemachines", ".github", "deploy", "terraform"} for part in parts)
        or name.endswith(".asl.json")
        or name == "dockerfile"
    ):
        return "infra"
    return "source"


def _parse_diff(ctx: CompanionContext) -> list[_FileChange]:
    """Per-file facts from a unified diff, merged with the caller's file list (order: diff, then list)."""
    changes: dict[str, _FileChange] = {}
    current: _FileChange | None = None
    in_hunk = False
    for line in ctx.diff_text.splitlines():
        if line.startswith("diff --git "):
            match = re.match(r"^diff --git a/(.+?) b/(.+)$", line)
            path = match.group(2) if match else line.split()[-1]
            current = changes.setdefault(path, _FileChange(path=path))
            current.in_diff = True
            in_hunk = False
            continue
        if current is None:
            continue
        if not in_hunk:
            if line.startswith("new file mode"):
                current.new = True
            elif line.startswith("deleted file mode"):
                current.deleted = True
            elif line.startswith("@@"):
                in_hunk = True
            continue
        if line.startswith("@@"):
            continue
        if line.startswith("+"):
            current.added += 1
            body = line[1:]
            if _CONFLICT.match(body):
                current.conflict_markers += 1
            if _TODO.search(body) and len(current.todo_lines) < 3:
                current.todo_lines.append(body.strip()[:120])
        elif line.startswith("-"):
            current.removed += 1
    for path in ctx.files:
        changes.setdefault(path, _FileChange(path=path))
    return list(changes.values())


def _code(path: str) -> str:
    return f"`{path}`"


class OfflineCompanion:
    """A deterministic companion that needs no model: same inputs, same turn, byte for byte.

    Heuristics (all read from the diff; ``+`` lines are the added lines):

    * Steps: one per changed file by kind — source: read the change and exercise the behaviour;
      tests: run that test file; dependency manifests/locks: reinstall and check the lock; docs: read for
      accuracy; infra/workflow definitions: synthesize/validate; deleted files: look for leftover
      references. Then a step when no test file changed, a step for truncated diffs (review the unseen
      files locally), and closing steps (full suite, reply/approve). At most 15 per-file steps.
    * Blockers: added lines that start with a git conflict marker (``<<<<<<<`` / ``>>>>>>>``; a bare
      ``=======`` is ignored because it is also a heading underline); added ``TODO`` / ``FIXME`` /
      ``XXX``; an empty diff; the operator's latest message reporting a failure ("fails", "broken",
      "error", …) unless a later message reports success ("passes", "works", "lgtm", …).
    * Decision: blockers → ``request_changes`` (confidence 0.9 with conflict markers or an empty diff,
      0.8 for an operator-reported failure, else 0.75). Otherwise ``approve`` with confidence
      0.9 − 0.25 if the diff was truncated − 0.2 if source changed but no test changed − 0.1 if more
      than 800 lines changed, + 0.05 if the operator reported success, clamped to [0.1, 0.95]. Below 0.5
      the decision is ``needs_discussion`` — except on the final turn, where it is ``approve`` so the
      dialogue converges.
    """

    model_name = "offline"

    # -- port -------------------------------------------------------------------------------------

    def first_turn(self, ctx: CompanionContext) -> CompanionTurn:
        changes = _parse_diff(ctx)
        steps = self._steps(ctx, changes)
        verdict = self._verdict(ctx, changes, operator_messages=[])
        text = "\n\n".join(
            [
                "Offline companion — I am a deterministic checklist, not a language model: the steps and "
                "the verdict below are derived mechanically from the diff.",
                self._stats_line(ctx, changes),
                f"Test steps:\n{format_steps(steps)}",
                self._verdict_line(verdict),
            ]
        )
        return CompanionTurn(text=text, test_steps=steps, verdict=verdict, model=self.model_name, is_model=False)

    def reply(self, ctx: CompanionContext, thread: list[ThreadTurn], operator_message: str) -> CompanionTurn:
        changes = _parse_diff(ctx)
        steps = self._steps(ctx, changes)
        operator_messages = [t.text for t in sorted(thread, key=lambda t: t.n) if t.role == "operator"]
        operator_messages.append(operator_message)
        verdict = self._verdict(ctx, changes, operator_messages=operator_messages)
        related = self._related_files(operator_message, [c.path for c in changes])
        if related:
            about = "Changed files related to your message: " + ", ".join(_code(p) for p in related) + "."
        else:
            listed = ", ".join(_code(c.path) for c in changes[:10]) or "(none)"
            about = f"No changed file matches the words of your message. The changed files are: {listed}."
        signal = _operator_signal(operator_messages)
        parts = [
            f"Offline companion (not a language model) — turn {ctx.turn_index} of {ctx.max_turns}.",
            about,
        ]
        if signal == "failure":
            parts.append("You reported a problem, so my verdict is to request changes.")
        elif signal == "success" and verdict.blockers:
            parts.append("You reported that it works, but the blockers found in the diff remain.")
        elif signal == "success":
            parts.append("You reported that it works; that raises my confidence.")
        parts.append(f"The test steps again:\n{format_steps(steps)}")
        parts.append(self._verdict_line(verdict))
        return CompanionTurn(
            text="\n\n".join(parts), test_steps=[], verdict=verdict, model=self.model_name, is_model=False
        )

    # -- heuristics -------------------------------------------------------------------------------

    @staticmethod
    def _stats_line(ctx: CompanionContext, changes: Sequence[_FileChange]) -> str:
        files = ctx.files_changed or len(changes)
        line = f"The change touches {files} file(s), +{ctx.insertions} / -{ctx.deletions} lines."
        if ctx.diff_truncated:
            line += f" The diff I read was truncated (full size {ctx.diff_total_bytes} bytes)."
        return line

    @staticmethod
    def _steps(ctx: CompanionContext, changes: Sequence[_FileChange]) -> list[str]:
        steps: list[str] = []
        per_file: list[str] = []
        kinds = {c.path: _kind(c.path) for c in changes}
        order = {"source": 0, "infra": 1, "deps": 2, "docs": 3, "test": 4}
        for change in sorted(changes, key=lambda c: order[kinds[c.path]]):
            path, kind = _code(change.path), kinds[change.path]
            counts = f" (+{change.added}/-{change.removed})" if change.in_diff else " (not in the diff I read)"
            if change.deleted:
                per_file.append(f"{path} is deleted: search the code base for remaining references to it.")
            elif kind == "test":
                per_file.append(f"Run the tests in {path}{counts} (e.g. `pytest {change.path}`) and confirm they pass.")
            elif kind == "deps":
                per_file.append(
                    f"Dependencies changed in {path}{counts}: reinstall (e.g. `uv sync`) and check the "
                    "lock file is consistent."
                )
            elif kind == "docs":
                per_file.append(f"Read {path}{counts} and check it matches what the code now does.")
            elif kind == "infra":
                per_file.append(
                    f"Infrastructure/workflow definition {path}{counts} changed: synthesize or validate it "
                    "before merging."
                )
            else:
                verb = "new file" if change.new else "changed lines"
                per_file.append(f"Open {path}{counts}, read the {verb} and exercise the behaviour they implement.")
        if len(per_file) > _MAX_FILE_STEPS:
            rest = len(per_file) - _MAX_FILE_STEPS
            per_file = [
                *per_file[:_MAX_FILE_STEPS],
                f"Skim the {rest} other changed file(s) listed in the diff stats.",
            ]
        if ctx.diff_truncated:
            unseen = [c.path for c in changes if not c.in_diff]
            where = f" — at least {', '.join(_code(p) for p in unseen[:5])}" if unseen else ""
            steps.append(
                "The diff I read was truncated, so part of the change is not covered below"
                f"{where}: read the full diff locally (e.g. `git diff <base>...HEAD`) before approving."
            )
        flagged = [c for c in changes if c.conflict_markers or c.todo_lines]
        if flagged:
            steps.append(
                "Look first at the flagged lines: "
                + "; ".join(
                    f"{_code(c.path)} ({'conflict markers' if c.conflict_markers else 'TODO/FIXME added'})"
                    for c in flagged
                )
                + "."
            )
        steps.extend(per_file)
        has_source = any(kinds[c.path] == "source" and not c.deleted for c in changes)
        if has_source and not any(kinds[c.path] == "test" for c in changes):
            steps.append(
                "No test file changed: exercise the changed behaviour by hand and decide whether a test is missing."
            )
        steps.append("Run the whole test suite and the linters on the branch.")
        steps.append("Reply with what you observed, then approve & merge or request changes.")
        return steps

    @staticmethod
    def _verdict(ctx: CompanionContext, changes: Sequence[_FileChange], *, operator_messages: Sequence[str]) -> Verdict:
        blockers: list[str] = []
        for change in changes:
            if change.conflict_markers:
                blockers.append(f"{_code(change.path)} contains {change.conflict_markers} added conflict marker(s)")
            for todo in change.todo_lines:
                blockers.append(f"{_code(change.path)} adds an unfinished marker: {todo}")
        empty = not changes and not ctx.diff_text.strip()
        if empty:
            blockers.append("the diff is empty: there is nothing to merge")
        signal = _operator_signal(operator_messages)
        if signal == "failure":
            last_failure = next(m for m in reversed(operator_messages) if _FAILURE.search(m))
            blockers.append(f"the operator reported a problem: {_clip(last_failure.strip(), 200)}")

        if blockers:
            if empty or any(c.conflict_markers for c in changes):
                confidence = 0.9
            elif signal == "failure":
                confidence = 0.8
            else:
                confidence = 0.75
            return Verdict(
                decision="request_changes",
                confidence=confidence,
                blockers=blockers[:10],
                summary=f"{len(blockers)} blocker(s) found; fix them before merging.",
            )

        kinds = [_kind(c.path) for c in changes]
        confidence = 0.9
        reasons: list[str] = []
        if ctx.diff_truncated:
            confidence -= 0.25
            reasons.append("the diff was truncated")
        if "source" in kinds and "test" not in kinds:
            confidence -= 0.2
            reasons.append("no test changed")
        if ctx.insertions + ctx.deletions > _LARGE_CHANGE_LINES:
            confidence -= 0.1
            reasons.append("the change is large")
        if signal == "success":
            confidence += 0.05
            reasons.append("the operator reported success")
        confidence = round(min(0.95, max(0.1, confidence)), 2)
        why = f" ({'; '.join(reasons)})" if reasons else ""
        if confidence < 0.5 and not ctx.is_final_turn:
            return Verdict(
                decision="needs_discussion",
                confidence=confidence,
                blockers=[],
                summary=f"No blocker found, but too little is known to approve yet{why}.",
            )
        return Verdict(
            decision="approve",
            confidence=confidence,
            blockers=[],
            summary=f"No blocker found in the diff{why}.",
        )

    @staticmethod
    def _verdict_line(verdict: Verdict) -> str:
        line = f"Verdict: {verdict.decision} (confidence {verdict.confidence:.2f}) — {verdict.summary}"
        if verdict.blockers:
            line += "\nBlockers:\n" + "\n".join(f"- {b}" for b in verdict.blockers)
        return line

    @staticmethod
    def _related_files(message: str, paths: Sequence[str]) -> list[str]:
        words = {w.lower() for w in _WORD.findall(message)} - _STOPWORDS
        related: list[str] = []
        for path in paths:
            p = PurePosixPath(path.lower())
            tokens = {t for part in p.parts for t in re.split(r"[^a-z0-9]+", part) if len(t) >= 3}
            tokens.add(p.stem)
            if words & tokens:
                related.append(path)
        return related


def _operator_signal(messages: Sequence[str]) -> Literal["failure", "success"] | None:
    """The latest operator message that reports an outcome decides; failure wins within one message."""
    for message in reversed(messages):
        if _FAILURE.search(message):
            return "failure"
        if _SUCCESS.search(message):
            return "success"
    return None


# --------------------------------------------------------------------------------------------------
# Factory
# --------------------------------------------------------------------------------------------------


def companion_from_config(kind: str, **kwargs: Any) -> Companion:
    """Build a companion. ``"offline"`` takes no arguments. ``"bedrock"`` takes ``model_id`` (required),
    ``client`` (a ``bedrock-runtime`` client; created from ``region_name`` if absent) and the keyword
    options of :class:`BedrockCompanion`."""
    normalized = kind.strip().lower()
    if normalized == "offline":
        if kwargs:
            raise ValidationFailedError(
                f"the offline companion takes no options (got {sorted(kwargs)})",
                details={"path": "companion"},
            )
        return OfflineCompanion()
    if normalized == "bedrock":
        model_id = kwargs.pop("model_id", None)
        if not model_id:
            raise ValidationFailedError(
                "the bedrock companion needs a model_id", details={"path": "companion.model_id"}
            )
        client = kwargs.pop("client", None)
        region_name = kwargs.pop("region_name", None)
        if client is None:
            import boto3

            client = boto3.client("bedrock-runtime", region_name=region_name)
        return BedrockCompanion(client, str(model_id), **kwargs)
    raise ValidationFailedError(
        f"unknown companion kind {kind!r}; expected 'bedrock' or 'offline'",
        details={"path": "companion.kind", "allowed": ["bedrock", "offline"]},
    )
