"""The offline review companion: deterministic, no model, no network. It derives the test steps and
the verdict from the diff (read by `baton/domain/unified_diff.py`) with the heuristics documented on
`OfflineCompanion`, and says plainly that it is not a model. The local stack answers with it."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from baton.domain.companion import CompanionTurn, Verdict, clip_text, format_steps
from baton.domain.unified_diff import FileChange, parse_unified_diff

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.companion import CompanionContext, ThreadTurn

__all__ = ["OfflineCompanion"]


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
        changes = parse_unified_diff(ctx.diff_text, ctx.files)
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
        changes = parse_unified_diff(ctx.diff_text, ctx.files)
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
    def _stats_line(ctx: CompanionContext, changes: Sequence[FileChange]) -> str:
        files = ctx.files_changed or len(changes)
        line = f"The change touches {files} file(s), +{ctx.insertions} / -{ctx.deletions} lines."
        if ctx.diff_truncated:
            line += f" The diff I read was truncated (full size {ctx.diff_total_bytes} bytes)."
        return line

    @staticmethod
    def _steps(ctx: CompanionContext, changes: Sequence[FileChange]) -> list[str]:
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
    def _verdict(ctx: CompanionContext, changes: Sequence[FileChange], *, operator_messages: Sequence[str]) -> Verdict:
        signal = _operator_signal(operator_messages)
        blockers = _blockers(ctx, changes, operator_messages, signal)
        if not blockers:
            return _approval(ctx, changes, signal)
        if (not changes and not ctx.diff_text.strip()) or any(c.conflict_markers for c in changes):
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


def _blockers(
    ctx: CompanionContext, changes: Sequence[FileChange], operator_messages: Sequence[str], signal: str | None
) -> list[str]:
    blockers: list[str] = []
    for change in changes:
        if change.conflict_markers:
            blockers.append(f"{_code(change.path)} contains {change.conflict_markers} added conflict marker(s)")
        blockers.extend(f"{_code(change.path)} adds an unfinished marker: {todo}" for todo in change.todo_lines)
    if not changes and not ctx.diff_text.strip():
        blockers.append("the diff is empty: there is nothing to merge")
    if signal == "failure":
        last_failure = next(m for m in reversed(operator_messages) if _FAILURE.search(m))
        blockers.append(f"the operator reported a problem: {clip_text(last_failure.strip(), 200)}")
    return blockers


def _approval(ctx: CompanionContext, changes: Sequence[FileChange], signal: str | None) -> Verdict:
    """No blocker: approve, with a confidence lowered by what is unknown (needs_discussion below 0.5)."""
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


def _operator_signal(messages: Sequence[str]) -> Literal["failure", "success"] | None:
    """The latest operator message that reports an outcome decides; failure wins within one message."""
    for message in reversed(messages):
        if _FAILURE.search(message):
            return "failure"
        if _SUCCESS.search(message):
            return "success"
    return None
