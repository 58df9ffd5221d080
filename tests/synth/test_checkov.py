"""checkov over the default and the everything-on templates (both synthesized with cdk-nag on, so these
two deployment options are checked here rather than in test_deployment_options.py), against the committed
baseline (tests/synth/checkov.py): a finding outside it fails. One checkov run (~15 CPU-s, most of it
checkov's start-up) also scans a probe template with a finding of its own, which shows that the baseline
lets a new finding through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.synth.checkov import BASELINE, scan, stage_templates
from tests.synth.options import CHECKOV_CASES

pytestmark = pytest.mark.infra

# An S3 bucket with no versioning (CKV_AWS_21): a finding no baseline entry covers (its own file).
PROBE = {"Resources": {"ProbeBucket": {"Type": "AWS::S3::Bucket", "Properties": {}}}}


# Two synths and checkov take ~45 s of CPU; on a machine shared with other test runs, minutes of wall.
@pytest.mark.timeout(600)
def test_no_checkov_finding_outside_the_baseline(tmp_path: Path) -> None:
    templates = stage_templates(tmp_path)
    assert sorted(p.name for p in templates.iterdir()) == sorted(case.name for case in CHECKOV_CASES)
    probe = templates / "probe" / "Probe.template.json"
    probe.parent.mkdir()
    probe.write_text(json.dumps(PROBE))

    result = scan(templates)

    baselined = {entry["file"] for entry in json.loads(BASELINE.read_text())["failed_checks"]}
    assert {file.split("/")[1] for file in baselined} == {case.name for case in CHECKOV_CASES}
    outside = [finding for finding in result.failed if "/probe/" not in finding]
    assert outside == [], "checkov findings not in infra/checkov/baseline.json:\n" + "\n".join(outside)
    assert "CKV_AWS_21 AWS::S3::Bucket.ProbeBucket (/probe/Probe.template.json)" in result.failed, result.output
    assert result.returncode == 1  # the probe's findings, and only those
