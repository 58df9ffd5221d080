"""The runtime layer as synthesized (infra/runtime_layer.py): the functions get Powertools, pydantic and
their dependencies at uv.lock's versions, the ones the tests run, as arm64 wheels compiled for the
runtime; not the AWS-managed Powertools layer (an older Powertools the suite fails on)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from infra.runtime_layer import manifest_lines
from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra


def _staged(synthesized: Any, s3_key: str) -> Path:
    manifest = json.loads((synthesized.outdir / f"{synthesized.stack.stack_name}.assets.json").read_text())
    folder: Path = synthesized.outdir / manifest["files"][s3_key.removesuffix(".zip")]["source"]["path"]
    return folder


def test_the_runtime_layer_holds_exactly_the_locked_versions_for_arm64(cfn: dict[str, Any], synthesized: Any) -> None:
    (layer,) = [
        v["Properties"]
        for v in resources(cfn, "AWS::Lambda::LayerVersion").values()
        if v["Properties"]["LayerName"] == f"{PREFIX}-runtime"
    ]
    assert layer["CompatibleArchitectures"] == ["arm64"] and layer["CompatibleRuntimes"] == ["python3.13"]
    python = _staged(synthesized, layer["Content"]["S3Key"]) / "python"
    shipped = sorted(
        f"{canonicalize_name(name)}=={version}"
        for name, version in (p.name.removesuffix(".dist-info").split("-") for p in python.glob("*.dist-info"))
    )
    assert shipped == sorted(manifest_lines())
    assert "aws-lambda-powertools==3.37.0" in shipped  # the version the suite passes on (uv.lock)
    (core,) = python.glob("pydantic_core/_pydantic_core.*.so")
    assert "aarch64-linux-gnu" in core.name and "cpython-313" in core.name, core.name
    assert list(python.glob("pydantic/__pycache__/*.cpython-313.pyc"))  # compiled for the runtime
    assert not (python / "boto3").exists() and not (python / "botocore").exists()  # the runtime's own


def test_the_retired_powertools_layer_version_key_is_refused() -> None:
    from aws_cdk import App

    from infra.config import TeamConfig

    with pytest.raises(ValueError, match=r"'powertools_layer_version' is no longer supported.*uv\.lock"):
        TeamConfig.from_node(App(context={"powertools_layer_version": "27"}).node)
    assert TeamConfig.from_node(App().node).team == "dev"
