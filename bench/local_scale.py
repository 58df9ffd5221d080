"""How far does the local stack scale? `baton dev` (moto as AWS, the handlers in-process) under load
(figures printed, never asserted; targets in docs/performance.md):

  load              parts/load.py: 1,000 pending questions over 100 runs answered by 8 clients: answers/s,
                    answer latency, the stack's CPU per answer, peak RSS, how long Ctrl-C takes
  load at history   the same at 10x history (a flat figure: an answer's cost does not grow with the run)
  inbox             parts/inbox_page.py: the inbox's first page at 1,000 pending (median, p95)

Usage: uv run python bench/local_scale.py [--quick] [--only load,load at history,inbox]
"""

from __future__ import annotations

from parts import sections

SECTIONS: list[sections.Section] = [
    ("load", ["parts/load.py"], ["parts/load.py", "--quick", "--history", "0"]),
    ("load at history", ["parts/load.py", "--history", "10"], ["parts/load.py", "--quick"]),
    ("inbox", ["parts/inbox_page.py"], ["parts/inbox_page.py", "--items", "20", "--runs", "4", "--samples", "2"]),
]

if __name__ == "__main__":
    sections.run(__doc__ or "", SECTIONS)
