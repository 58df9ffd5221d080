"""A Strands Agents agent whose tool calls wait for a person's approval in Baton, across a restart.

    make dev                                              # terminal 1: `baton dev`, the local stack
    uv run python examples/strands_agents.py ask          # the agent asks to delete notes.txt, waits 5 s, exits
                                                          # (ask 0: exits at once; ask 60: waits a minute)
    (approve, deny or edit it in the inbox that `baton dev` printed, or:)
    uv run python examples/strands_agents.py answer approve        # or: deny, edit
    uv run python examples/strands_agents.py resume       # a new process resumes; the tool runs once, or not

The agent's conversation and its pending interrupt live in a Strands session (FileSessionManager, under
.baton/strands-example); the approval lives in Baton. The model here is scripted (it always asks to delete
notes.txt) so the example runs offline: give `Agent` your own model (e.g. `strands.models.BedrockModel()`).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from strands import Agent, tool
from strands.models import Model
from strands.session.file_session_manager import FileSessionManager

from baton import Client
from baton.integrations.strands import STATE_KEY, BatonToolApprovals

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterable

    from strands.types.content import Messages
    from strands.types.streaming import StreamEvent

RUN = "strands-example"  # the Baton run the approvals belong to
SESSIONS = ".baton/strands-example"


@tool
def delete_file(path: str) -> str:
    """Delete one file.

    Args:
        path: The file to delete.
    """
    print(f"TOOL RAN: delete_file({path!r})")
    return f"deleted {path}"


class ScriptedModel(Model):
    """Stands in for a real model: asks to delete notes.txt, then repeats what the tool said."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError

    async def stream(self, messages: Messages, *args: Any, **kwargs: Any) -> AsyncIterable[StreamEvent]:  # type: ignore[override]
        results = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
        yield {"messageStart": {"role": "assistant"}}
        if results:
            said = " ".join(str(c.get("text", "")) for c in results[-1]["content"])
            yield {"contentBlockDelta": {"delta": {"text": f"The tool said: {said}"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_1", "name": "delete_file"}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"path": "notes.txt"})}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def agent_process(wait_seconds: float = 5) -> tuple[Agent, BatonToolApprovals]:
    approvals = BatonToolApprovals(Client(), RUN, timeout_seconds=3600, wait_seconds=wait_seconds)
    agent = Agent(
        model=ScriptedModel(),
        tools=[delete_file],
        hooks=[approvals],
        session_manager=FileSessionManager(session_id="demo", storage_dir=SESSIONS),
        callback_handler=None,
    )
    return agent, approvals


def main(command: str, *rest: str) -> None:
    if command == "ask":
        agent, _ = agent_process(wait_seconds=float(rest[0]) if rest else 5)
        result = agent("Delete notes.txt")
        for interrupt in result.interrupts or []:
            print(f"Waiting for a person: Baton approval {interrupt.reason['interaction_id']} in run {RUN}")
        if result.stop_reason != "interrupt":
            print(result)
    elif command == "answer":  # what a person does in the inbox
        decision = rest[0] if rest else "approve"
        answer: dict[str, Any] = {"decision": decision, "reason": "from the example"}
        if decision == "edit":
            answer["arguments"] = {"path": "notes.bak"}
        agent, _ = agent_process()
        for asked in (agent.state.get(STATE_KEY) or {}).values():
            print(Client().answer(RUN, asked["interaction_id"], answer))
    elif command == "resume":
        agent, approvals = agent_process()
        responses = approvals.resume_responses(agent, wait_seconds=10)
        if not responses:
            sys.exit("Nothing to resume: no approval is decided yet (answer it first, or run ask).")
        print(agent(responses))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(*(sys.argv[1:] or ["help"]))
