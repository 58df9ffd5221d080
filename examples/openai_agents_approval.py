"""An OpenAI Agents SDK agent whose tool calls a person approves through Baton (baton.integrations.openai_agents).

Against the local stack (`make dev` in another terminal), from the checkout:

    uv run python examples/openai_agents_approval.py            # asks, waits up to --wait seconds
    uv run python examples/openai_agents_approval.py --wait 0   # asks and exits: answer, then run it again

Answer in the inbox (http://127.0.0.1:8787/inbox/), or with the CLI:

    uv run baton runs answer openai-agents-demo <approval id> '{"decision": "approve"}' --parse-json
    ... '{"decision": "deny", "reason": "not that file"}' --parse-json

The paused run (the SDK's RunState and the approvals' ids) is kept in Baton with the run, so a second
run of this script, in a new process that knows only the run id, resumes it: the tool runs once, after
the approval is consumed for exactly that call. A denial's reason is what the model reads; an edit is refused (this SDK
runs only the call the model made); unanswered by --timeout-seconds, Baton denies and the tool never runs.

The model is the SDK's scripted test model (no API key needed); put your own model where it is used.
Needs the extra: `pip install 'baton[openai-agents]'`.
"""

from __future__ import annotations

import argparse

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from baton.client import Client
from baton.integrations.openai_agents import AskSettings, BatonApprovals

RUN_ID = "openai-agents-demo"  # Baton's run (--run names another)


@function_tool(needs_approval=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file (here: print it; a real tool would write it)."""
    print(f"write_file ran: {path!r} <- {text!r}")
    return f"wrote {len(text)} characters to {path}"


def scripted_model(paused: bool) -> ScriptedModel:
    """Plays a model that wants to write a file, then reports what happened."""
    done = [assistant_message("Done: the notes are saved (or not, if you said no).")]
    if paused:  # the tool call was made before the restart: only the report is left
        return ScriptedModel([done])
    return ScriptedModel([[function_call("write_file", {"path": "notes.md", "text": "hello"}, call_id="call_1")], done])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wait", type=float, default=300, help="seconds to wait for a decision in this process")
    parser.add_argument("--timeout-seconds", type=int, default=3600, help="the approval's deadline (then denied)")
    parser.add_argument("--run", default=RUN_ID, help="Baton's run id (the paused run is kept in Baton with it)")
    args = parser.parse_args()
    run_id: str = args.run
    set_tracing_disabled(True)  # the scripted model has no OpenAI account to export traces to

    settings = AskSettings(timeout_seconds=args.timeout_seconds, wait_seconds=args.wait)
    baton = BatonApprovals(Client(), run_id, settings=settings)  # state=<path> keeps it in a file instead
    paused = baton.paused()
    agent = Agent(name="writer", instructions="Save notes.", tools=[write_file], model=scripted_model(paused))
    outcome = baton.resume_sync(agent) if paused else baton.run_sync(agent, "Save 'hello' to notes.md")
    if outcome.status == "paused":
        print(f"Waiting for a person on {', '.join(outcome.approvals)}: answer, then run this again (run {run_id}).")
        return
    print(f"agent: {outcome.final_output}")


if __name__ == "__main__":
    main()
