"""How big is a cold start? What a fresh process spends before it does its first piece of work (figures
printed, never asserted):

  functions         bench/summary.py's cold imports (parts/cold_imports.py): every deployed function's
                    handler imported as a Lambda sandbox against its libraries' floor, in CPU time and (full
                    mode) valgrind's instruction count; then `baton --help` against a bare Typer app, `baton
                    dev` until its API answers, and the local stack's start() in process, with the summary
  slack             parts/slack_ack.py --cold: a cold slack_interactions container until its first ack
  mcp               parts/mcp_door.py's first line: the MCP handler's import (it also times its calls)

Usage: uv run python bench/cold_start.py [--quick] [--only functions,slack,mcp]
       one function: uv run python bench/parts/cold_imports.py [--instructions] [names...]
"""

from __future__ import annotations

from parts import sections

STARTS = "cold imports,CLI,baton dev,stack start"
SECTIONS: list[sections.Section] = [
    ("functions", ["summary.py", "--only", STARTS], ["summary.py", "--quick", "--only", STARTS.rsplit(",", 1)[0]]),
    ("slack", ["parts/slack_ack.py", "--cold"], ["parts/slack_ack.py", "--cold", "--samples", "1"]),
    ("mcp", ["parts/mcp_door.py"], ["parts/mcp_door.py", "--calls", "3", "--waits", "1", "--bound", "2"]),
]

if __name__ == "__main__":
    sections.run(__doc__ or "", SECTIONS)
