"""Test what deploys: the runtime layer holds uv.lock's versions (the ones this suite runs), the manifest
says so, the Powertools floor is the version the suite passes on, and the suite runs the runtime's Python."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from infra.assets import RUNTIME_PYTHON
from infra.runtime_layer import LOCK, check_manifest, locked_closure, manifest_lines, manifest_text

ROOT = Path(__file__).resolve().parents[2]


def _locked(name: str) -> str:
    (version,) = [p["version"] for p in tomllib.loads(LOCK.read_text())["package"] if p["name"] == name]
    return str(version)


def test_the_manifest_lists_exactly_the_locked_closure() -> None:
    pins = check_manifest()
    assert manifest_lines() == [pin.line for pin in pins]
    names = {pin.name for pin in pins}
    # What the handlers import, with Powertools' tracer and validation extras, and pydantic's compiled core.
    assert {"aws-lambda-powertools", "pydantic", "pydantic-core", "aws-xray-sdk", "fastjsonschema"} <= names
    # The runtime's own: never shipped (nor what only they need).
    assert not names & {"boto3", "botocore", "s3transfer", "urllib3", "python-dateutil"}
    assert all(pin.hashes for pin in pins)  # the build requires the lock's hashes


def test_a_manifest_that_drifts_from_the_lock_is_refused(tmp_path: Path) -> None:
    drifted = tmp_path / "runtime_layer.txt"
    drifted.write_text(
        manifest_text(locked_closure()).replace(f"pydantic=={_locked('pydantic')}\n", "pydantic==2.10.0\n")
    )
    with pytest.raises(RuntimeError, match=r"only in the manifest: \['pydantic==2\.10\.0'\]"):
        check_manifest(manifest=drifted)


def test_the_powertools_floor_is_the_version_the_suite_runs() -> None:
    # Below it the suite fails (3.20: every route with a query model answers 500; 3.22: percent-encoded
    # path parameters; 3.24: a repeated `?kind=` keeps one value): nobody may install one.
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (powertools,) = [Requirement(d) for d in dependencies if Requirement(d).name == "aws-lambda-powertools"]
    floors = [s.version for s in powertools.specifier if s.operator == ">="]
    assert floors == [_locked("aws-lambda-powertools")], powertools


def test_the_suite_runs_on_the_lambda_runtimes_python() -> None:
    assert f"{sys.version_info.major}.{sys.version_info.minor}" == RUNTIME_PYTHON, sys.executable
