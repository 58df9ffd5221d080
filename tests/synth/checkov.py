"""checkov over the synthesized templates (the default deployment and everything on), against the committed
baseline infra/checkov/baseline.json: a finding not in it fails. (checkov matches a baseline entry by resource
type, logical id and check id, not by file: the two templates' resources of the same logical id share one.)

checkov runs from its own environment, `.tools/checkov` (scripts/bootstrap.sh installs it from the pinned,
hashed infra/checkov/requirements.txt): its pins conflict with the project's lock. After a change that
adds or fixes findings on purpose, write the baseline again and commit it with the change:

    .venv/bin/python -m tests.synth.checkov --create-baseline
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.synth.options import CHECKOV_CASES, ROOT, Case, synthesize_case

CHECKOV = ROOT / ".tools" / "checkov" / "bin" / "checkov"
BASELINE = ROOT / "infra" / "checkov" / "baseline.json"
# `--skip-download`: no call to Prisma Cloud for guidelines (offline; CI has no account there either).
ARGS = ("--framework", "cloudformation", "--skip-download", "--compact", "--quiet", "--output", "json")


@dataclass(frozen=True)
class Scan:
    returncode: int
    failed: list[str]  # "<check id> <resource> (<file>)" of each finding not in the baseline
    output: str


def stage_templates(outdir: Path, cases: tuple[Case, ...] = CHECKOV_CASES) -> Path:
    """Synthesize the cases (cdk-nag on) and copy their templates, nested ones too, into one folder per
    case under `outdir/templates`: checkov's baseline names files relative to the folder it scans."""
    templates = outdir / "templates"
    for case in cases:
        synthesized = synthesize_case(case, outdir / case.name / "cdk.out")
        target = templates / case.name
        target.mkdir(parents=True)
        for template in synthesized.template.parent.glob("*.template.json"):
            shutil.copy2(template, target / template.name)
    return templates


def _failed_checks(output: str) -> list[str]:
    if not output.strip():
        return []
    loaded = json.loads(output)
    reports = loaded if isinstance(loaded, list) else [loaded]
    return sorted(
        f"{check['check_id']} {check['resource']} ({check['file_path']})"
        for report in reports
        if isinstance(report, dict)
        for check in report.get("results", {}).get("failed_checks", [])
    )


def scan(templates: Path, *, create_baseline: bool = False) -> Scan:
    if not CHECKOV.exists():
        raise FileNotFoundError(f"{CHECKOV} is missing: run `make bootstrap` (scripts/bootstrap.sh installs it)")
    baseline = ("--create-baseline",) if create_baseline else ("--baseline", str(BASELINE))
    proc = subprocess.run(
        [str(CHECKOV), "--directory", str(templates), *ARGS, *baseline],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if create_baseline:
        shutil.copy2(templates / ".checkov.baseline", BASELINE)
    return Scan(proc.returncode, _failed_checks(proc.stdout), proc.stdout + proc.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.synth.checkov", description=__doc__)
    parser.add_argument("--create-baseline", action="store_true", help=f"write {BASELINE.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="baton-checkov-") as folder:
        result = scan(stage_templates(Path(folder)), create_baseline=args.create_baseline)
    if args.create_baseline:
        print(f"wrote {BASELINE.relative_to(ROOT)}", file=sys.stderr)
        return 0
    print("\n".join(result.failed) or "no finding outside the baseline", file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
