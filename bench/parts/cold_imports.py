"""Cold import per function against its libraries' floor: the cold-import part of bench/summary.py (and so
of bench/cold_start.py), also runnable alone
(`uv run python bench/parts/cold_imports.py [--samples 5] [--instructions] [--jobs 2] [names...]`).

A fresh interpreter imports functions/<name>/handler.py as a Lambda sandbox with tracing off
(POWERTOOLS_TRACE_DISABLED), bytecode compiled (what the bootstrap and the assets compile). Two units:
  CPU time, best of N   the fastest of N fresh interpreters (the least disturbed by the other processes
                        on the machine; the median is printed beside it)
  instructions          valgrind's count of the same import (`--tool=exp-bbv --instr-count-only`, which
                        counts what callgrind counts at a third of its cost), the interpreter's own start
                        subtracted: the same figure on an idle or a loaded machine (to ~0.1 %), so the
                        ratios do not depend on what else runs. Each count costs ~30x the import's CPU.
`-X importtime` is not used: its figures are wall time, so they move with the machine's load.

The floor is what the function's own libraries cost to import, nothing of Baton's (FLOORS, FLOOR_OF):
  api      Powertools' REST resolver with validation (as baton/api/app.py builds it) + Logger + pydantic
  mcp      Logger + pydantic + mcp_types (the protocol's models; the door answers JSON-RPC itself)
  gate     Logger + Powertools' parser + one model defined: every function that parses its event into
           a payload model (its first parse builds one; the first build loads pydantic's plugin loader,
           ~12 ms, which `parse`'s import alone does not)
  model    Logger + pydantic with one model defined (pydantic loads its model machinery with the first
           model): the notify functions and the scheduled ones whose records are models but whose event
           is not parsed
  logger   Logger alone: the Slack functions, whose import defers everything else to the first request
The API is also measured with the route module its first request loads (a resume: baton/api/route_families.py)
and, in full mode, without bytecode.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ROOT / "functions"
GOAL = 1.2  # issue 15: every function's cold import within 1.2x its libraries' floor

FLOORS = {
    "api": (
        "import pydantic\n"
        "from aws_lambda_powertools import Logger\n"
        "from aws_lambda_powertools.event_handler import APIGatewayRestResolver\n"
        "APIGatewayRestResolver(enable_validation=True)\n"
    ),
    "mcp": "import pydantic\nfrom aws_lambda_powertools import Logger\nimport mcp_types\n",
    "gate": (
        "import pydantic\nfrom aws_lambda_powertools import Logger\n"
        "from aws_lambda_powertools.utilities.parser import parse\nclass Model(pydantic.BaseModel):\n    x: int\n"
    ),
    "model": (
        "import pydantic\nfrom aws_lambda_powertools import Logger\nclass Model(pydantic.BaseModel):\n    x: int\n"
    ),
    "logger": "from aws_lambda_powertools import Logger\n",
}
# Functions whose floor is not `gate` (every other function parses its event with Powertools' parser).
FLOOR_OF = {
    "api": "api",
    "mcp": "mcp",
    "audit_archive": "model",  # a stream batch read as records, no parser
    "interrupt_sweeper": "model",  # scheduled: no event to parse
    "reconcile": "model",  # scheduled: no event to parse
    "notify_console": "model",
    "notify_email": "model",
    "notify_slack": "model",
    "notify_webhook": "model",
    "slack_interactions": "logger",
    "slack_worker": "logger",
}
LAMBDA_ENV = {
    "BATON_TABLE_NAME": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "LAMBDA_TASK_ROOT": str(ROOT),
    "POWERTOOLS_TRACE_DISABLED": "true",
}
# The API function's cold start as a resume request meets it: the import, then its route module.
API_FIRST_REQUEST = "api + resume's routes"


def floor_of(name: str) -> str:
    return FLOOR_OF.get(name.split()[0], "gate")


def handlers() -> list[str]:
    return sorted(p.parent.name for p in FUNCTIONS.glob("*/handler.py"))


def import_code(function: str) -> str:
    if function == API_FIRST_REQUEST:
        return import_code("api") + (
            "from baton.api.route_families import family_of\n"
            "handler.APP.include_family(family_of('/api/runs/r/resume'))\n"
        )
    return (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('handler', {str(FUNCTIONS / function / 'handler.py')!r})\n"
        "handler = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(handler)\n"
    )


def timed(code: str, *, bytecode: bool = True) -> tuple[float, float]:
    """(wall, CPU) seconds a fresh interpreter spends running `code` (its own start excluded)."""
    wrapped = (
        "import time\nt, c = time.perf_counter(), time.process_time()\n"
        f"exec(compile({code!r}, 'bench', 'exec'))\n"
        "print(time.perf_counter() - t, time.process_time() - c)\n"
    )
    with tempfile.TemporaryDirectory() as empty:
        flags = [] if bytecode else ["-X", f"pycache_prefix={empty}"]
        result = subprocess.run(
            [sys.executable, *flags, "-c", wrapped],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, **LAMBDA_ENV},
            check=True,
        )
    wall, cpu = result.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def cpu_ms(code: str, samples: int, *, bytecode: bool = True) -> tuple[float, float]:
    """(best, median) CPU milliseconds over `samples` fresh interpreters."""
    measured = [timed(code, bytecode=bytecode)[1] * 1000 for _ in range(samples)]
    return min(measured), statistics.median(measured)


# Valgrind's basic-block-vector tool counting instructions only: the same count as callgrind's (to ~0.1 %)
# at about a third of its cost, since it keeps no call graph.
COUNTER = ["valgrind", "--tool=exp-bbv", "--instr-count-only=yes", "--bb-out-file=/dev/null"]


def instructions(code: str) -> int:
    """Instructions valgrind counts for a fresh interpreter running `code` (a fixed hash seed: the same
    dict and set layouts, so the same count, run after run)."""
    result = subprocess.run(
        [*COUNTER, sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **LAMBDA_ENV, "PYTHONHASHSEED": "0"},
        check=False,
    )
    found = re.search(r"Total instructions:\s*(\d+)", result.stderr)
    if result.returncode != 0 or not found:
        raise RuntimeError(f"valgrind failed ({result.returncode}): {result.stderr[-2000:]}")
    return int(found.group(1))


def count_all(codes: dict[str, str], jobs: int) -> dict[str, int]:
    """Instruction counts of every labelled import, `jobs` valgrinds at a time, less the interpreter's start
    (each printed to stderr as it lands: a full count takes minutes)."""

    def counted(item: tuple[str, str]) -> int:
        count = instructions(item[1])
        print(f"  counted {item[0] or 'interpreter start'}: {count / 1e6:.1f} M", file=sys.stderr, flush=True)
        return count

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        counts = dict(zip(["", *codes], pool.map(counted, [("", "pass"), *codes.items()]), strict=True))
    base = counts.pop("")
    return {label: count - base for label, count in counts.items()}


def over(ratio: float) -> str:
    return f"  OVER {GOAL}x" if ratio > GOAL else ""


class ColdImports:
    """Every function's cold import against its floor, in CPU time and (if counted) instructions."""

    def __init__(self, names: list[str], samples: int) -> None:
        self.names = names
        self.samples = samples
        kinds = sorted({floor_of(n) for n in names}, key=list(FLOORS).index)
        self.floor_cpu = {kind: cpu_ms(FLOORS[kind], samples) for kind in kinds}
        self.cpu = {name: cpu_ms(import_code(name), samples) for name in names}
        self.floor_instr: dict[str, int] = {}
        self.instr: dict[str, int] = {}

    def count(self, jobs: int) -> None:
        counts = count_all(
            {**{f"floor {k}": FLOORS[k] for k in self.floor_cpu}, **{n: import_code(n) for n in self.names}}, jobs
        )
        self.floor_instr = {k: counts[f"floor {k}"] for k in self.floor_cpu}
        self.instr = {n: counts[n] for n in self.names}

    def ratio(self, name: str) -> float:
        """The reproducible ratio where it was counted, else CPU time's."""
        kind = floor_of(name)
        if self.instr:
            return self.instr[name] / self.floor_instr[kind]
        return self.cpu[name][0] / self.floor_cpu[kind][0]

    def unit(self) -> str:
        return "instructions" if self.instr else f"CPU best of {self.samples}"

    def print(self) -> None:
        print(
            f"cold import, fresh interpreters, bytecode compiled, tracing off: CPU ms best (median) of {self.samples}"
        )
        if self.instr:
            print("  and instructions counted by valgrind (M, the interpreter's own start subtracted)")
        rows = [(f"floor {k}", k, *self.floor_cpu[k], self.floor_instr.get(k)) for k in self.floor_cpu]
        rows += [(n, floor_of(n), *self.cpu[n], self.instr.get(n)) for n in self.names]
        for label, kind, best, median, instr in rows:
            line = f"  {label:<24} {best:7.1f} ({median:7.1f}) CPU"
            if not label.startswith("floor "):
                line += f" {best / self.floor_cpu[kind][0]:5.2f}x"
            if instr is not None:
                line += f"   {instr / 1e6:8.1f} M"
                if not label.startswith("floor "):
                    line += f" {instr / self.floor_instr[kind]:5.2f}x"
            if not label.startswith("floor "):
                line += f"  floor {kind}{over(self.ratio(label))}"
            print(line)
        late = self.over()
        print(f"  over {GOAL}x their floor ({self.unit()}): {len(late)} of {len(self.names)}" + _listed(late))

    def over(self) -> list[str]:
        return [n for n in self.names if self.ratio(n) > GOAL]


def _listed(names: list[str]) -> str:
    return (": " + ", ".join(names)) if names else ""


def api_without_bytecode(samples: int, with_bytecode_ms: float) -> None:
    best, _ = cpu_ms(import_code("api"), samples, bytecode=False)
    floor, _ = cpu_ms(FLOORS["api"], samples, bytecode=False)
    print(
        f"  api without bytecode     {best:7.1f} CPU   ({best / with_bytecode_ms:.1f}x the api with bytecode;"
        f" its floor without bytecode {floor:.1f} CPU)"
    )


def run(samples: int, count: bool, jobs: int, add: Callable[..., None], names: list[str] | None = None) -> None:
    """Measure, print, and hand each row to `add(figure, value, anchor, ratio, note)` (bench/summary.py's table)."""
    cold = ColdImports(names or [*handlers(), API_FIRST_REQUEST], samples)
    if count and shutil.which("valgrind") is None:
        print("  instructions: valgrind not installed (apt-get install valgrind); CPU time only")
    elif count:
        cold.count(jobs)
    cold.print()
    if samples > 1 and "api" in cold.cpu:
        api_without_bytecode(samples, cold.cpu["api"][0])
    for name in cold.names:
        kind = floor_of(name)
        if cold.instr:
            value = f"{cold.instr[name] / 1e6:.0f} M instr"
            anchor = f"floor {kind} {cold.floor_instr[kind] / 1e6:.0f} M"
        else:
            value = f"{cold.cpu[name][0]:.0f} ms CPU"
            anchor = f"floor {kind} {cold.floor_cpu[kind][0]:.0f} ms"
        add(f"cold import {name}", value, anchor, cold.ratio(name), over(cold.ratio(name)))
    late = cold.over()
    add(f"cold imports over {GOAL}x their floor", f"{len(late)} of {len(cold.names)}", cold.unit(), None, _listed(late))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help=f"functions to measure (default: all, and {API_FIRST_REQUEST!r})")
    parser.add_argument("--samples", type=int, default=5, help="fresh interpreters per CPU figure (default 5)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions (the reproducible unit)")
    parser.add_argument("--jobs", type=int, default=2, help="valgrind runs at a time (default 2)")
    args = parser.parse_args()
    names = [API_FIRST_REQUEST if n == "api+" else n for n in args.names]
    run(args.samples, args.instructions, args.jobs, lambda *row: None, names or None)


if __name__ == "__main__":
    main()
