"""A LangGraph agent whose tool calls a person approves through Baton (baton.integrations.langgraph).

Against the local stack (`make dev` in another terminal), from the checkout:

    uv run python examples/langgraph_approval.py            # asks, waits up to --wait seconds
    uv run python examples/langgraph_approval.py --wait 0   # asks and exits: answer, then run it again

Answer in the inbox (http://127.0.0.1:8787/inbox/), or with the CLI:

    uv run baton runs answer langgraph-demo <approval id> '{"decision": "approve"}' --parse-json
    ... '{"decision": "edit", "arguments": {"path": "drafts/notes.md", "text": "hi"}}' --parse-json
    ... '{"decision": "deny", "reason": "not that file"}' --parse-json

The graph's pause lives in a SQLite checkpoint (.baton/<run>.sqlite), so a second run of this
script, in a new process, resumes it: the same approval is found, and the tool runs once, with the
approved (or edited) arguments. Unanswered by --timeout-seconds, Baton denies and the tool never runs.

The chat model is scripted (no API key needed); put your own model where `scripted_model` is used.
Needs the extra: `pip install 'baton[langgraph]' langgraph-checkpoint-sqlite`.
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from baton.client import Client
from baton.integrations.langgraph import resume_when_answered

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

RUN_ID = "langgraph-demo"  # Baton's run; also the LangGraph thread (--run names another)


@tool
def write_file(path: str, text: str) -> str:
    """Write text to a file (here: print it; a real tool would write it)."""
    print(f"write_file ran: {path!r} <- {text!r}")
    return f"wrote {len(text)} characters to {path}"


class ScriptedModel(GenericFakeChatModel):
    """Plays a model that wants to write a file, then reports (bind_tools: as a real model, ignored here)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def scripted_model(paused: bool) -> ScriptedModel:
    done = AIMessage(content="Done: the notes are saved (or not, if you said no).")
    if paused:  # the tool call was made before the restart: only the report is left
        return ScriptedModel(messages=iter([done]))
    call = {"name": "write_file", "args": {"path": "notes.md", "text": "hello"}, "id": "call_1"}
    return ScriptedModel(messages=iter([AIMessage(content="", tool_calls=[call]), done]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wait", type=float, default=300, help="seconds to wait for a decision in this process")
    parser.add_argument("--timeout-seconds", type=int, default=3600, help="the approval's deadline (then denied)")
    parser.add_argument("--run", default=RUN_ID, help="Baton's run id, also the LangGraph thread")
    args = parser.parse_args()
    run_id: str = args.run

    Path(".baton").mkdir(exist_ok=True)
    with sqlite3.connect(f".baton/{run_id}.sqlite", check_same_thread=False) as connection:
        checkpointer = SqliteSaver(connection)
        config: RunnableConfig = {"configurable": {"thread_id": run_id}}
        paused = bool(_graph(checkpointer, paused=False).get_state(config).interrupts)
        graph = _graph(checkpointer, paused=paused)
        if not paused:
            graph.invoke({"messages": [{"role": "user", "content": "Save 'hello' to notes.md"}]}, config)
        client = Client()
        result = resume_when_answered(
            graph, config, client, run_id, wait_seconds=args.wait, timeout_seconds=args.timeout_seconds
        )
        if result is None:
            print(f"Waiting for a person: answer in the inbox, then run this again (run {run_id}).")
            return
        for message in result["messages"][-2:]:  # the tool's result (or the denial the model read), the reply
            print(f"{message.type}: {message.content}")


def _graph(checkpointer: SqliteSaver, *, paused: bool) -> CompiledStateGraph[Any, Any, Any, Any]:
    gate: HumanInTheLoopMiddleware[Any, Any, Any] = HumanInTheLoopMiddleware(interrupt_on={"write_file": True})
    return create_agent(scripted_model(paused), tools=[write_file], middleware=[gate], checkpointer=checkpointer)


if __name__ == "__main__":
    main()
