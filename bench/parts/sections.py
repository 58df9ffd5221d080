"""What the four question scripts share: run each of their sections, a part script in its own process
(each starts its own local stack and hooks botocore in its process), one after the other, its output
passed through, and say how long each took. Figures are printed, never asserted."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

# a section: (name, its script under bench/ with arguments, the same in quick mode)
Section = tuple[str, list[str], list[str]]


def run(doc: str, sections: list[Section]) -> None:
    """Parse `--quick` and `--only`, then run the chosen sections in order; exit non-zero if one failed."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small n in every section (a check that it runs)")
    names = [name for name, _, _ in sections]
    parser.add_argument("--only", help=f"comma-separated sections, of: {', '.join(names)}")
    args = parser.parse_args()
    wanted = {name.strip() for name in args.only.split(",")} if args.only else set(names)
    if unknown := wanted - set(names):
        parser.error(f"--only: no such section {sorted(unknown)}")
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    took, failed = [], []
    for name, full, quick in sections:
        if name not in wanted:
            continue
        argv = quick if args.quick else full
        print(f"\n=== {name}: bench/{' '.join(argv)}", flush=True)
        started = time.perf_counter()
        if subprocess.run([sys.executable, str(BENCH / argv[0]), *argv[1:]], cwd=ROOT, check=False).returncode:
            failed.append(name)
        took.append(f"{name} {time.perf_counter() - started:.0f} s")
    print(f"\nsections took: {', '.join(took)}; load average at end {os.getloadavg()[0]:.2f}")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")
