"""Baton's tools over the Model Context Protocol: `tools.py` (what an agent sees), `agent.py` (what each
tool does, with bounded waits), `server.py` (the JSON-RPC methods), `http.py` (the Lambda-shaped
Streamable HTTP endpoint, `POST /mcp`) and `protocol_prompt.md` (the system-prompt section). The stdio
entry (`baton mcp --run ID`) is `baton/cli/mcp.py`."""
