"""The deployed code carries bytecode for the Lambda runtime (infra/assets.py): the staged copy is
compiled by an interpreter of the runtime's version, as unchecked-hash `.pyc`, and the CDK asset is
that copy. This machine's own Python stands in for the runtime's here (its magic number is checked)."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path

import pytest

from baton.workflows.source_tree import source_tree
from infra import assets

THIS_VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
UNCHECKED_HASH = 0b01  # PEP 552 flags: hash-based, not checked against the source


def _pyc_header(path: Path) -> tuple[bytes, int]:
    data = path.read_bytes()[:8]
    return data[:4], struct.unpack("<I", data[4:8])[0]


def test_the_staged_layer_is_compiled_for_the_given_interpreter(tmp_path: Path) -> None:
    layer = source_tree().layer_dir
    assert assets.stage_compiled(layer, tmp_path, sys.executable) is True
    staged = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    sources = [p for p in staged if "__pycache__" not in p]
    assert sources == assets.shipped_files(layer)  # the same files ship, plus their bytecode
    tag = sys.implementation.cache_tag
    modules = [p for p in sources if p.endswith(".py")]
    assert modules and "python/baton/runtime/wiring.py" in modules
    for module in modules:
        pyc = tmp_path / Path(module).parent / "__pycache__" / f"{Path(module).stem}.{tag}.pyc"
        magic, flags = _pyc_header(pyc)
        assert magic == importlib.util.MAGIC_NUMBER and flags == UNCHECKED_HASH, module
    assert not [p for p in staged if p.startswith("python/baton/cli/") or p.startswith("python/baton/local/")]


def test_without_the_runtimes_python_the_asset_ships_as_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert assets.stage_compiled(source_tree().layer_dir, tmp_path, None) is False
    assert not list(tmp_path.rglob("*.pyc"))


def test_the_runtime_interpreter_is_one_of_the_runtimes_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_RUNTIME_PYTHON", sys.executable)
    monkeypatch.setenv("PATH", "/nonexistent")  # neither python3.x nor uv: only the variable can name it
    assets.runtime_interpreter.cache_clear()
    try:
        assert assets.runtime_interpreter(THIS_VERSION) == sys.executable
        assert assets.runtime_interpreter("2.7") is None  # the variable names another version: refused
    finally:
        assets.runtime_interpreter.cache_clear()


def test_the_cdk_asset_is_the_compiled_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aws_cdk import App, Stack
    from aws_cdk import aws_lambda as lambda_

    package = tmp_path / "src"
    (package / "python" / "pkg").mkdir(parents=True)
    (package / "python" / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (package / "python" / "pkg" / "__pycache__").mkdir()
    (package / "python" / "pkg" / "__pycache__" / "stale.pyc").write_bytes(b"not ours")  # left behind
    monkeypatch.setattr(assets, "runtime_interpreter", lambda version=assets.RUNTIME_PYTHON: sys.executable)

    app = App(outdir=str(tmp_path / "out"))
    stack = Stack(app, "Compiled")
    lambda_.LayerVersion(
        stack, "Layer", code=lambda_.Code.from_asset(str(package), **assets.asset_options(str(package)))
    )
    assembly = app.synth()
    manifest = json.loads((Path(assembly.directory) / "Compiled.assets.json").read_text())
    (entry,) = [f for f in manifest["files"].values() if f["source"]["path"].startswith("asset.")]  # not the template
    staged = Path(assembly.directory) / entry["source"]["path"]
    files = sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file())
    assert files == ["python/pkg/__init__.py", f"python/pkg/__pycache__/__init__.{sys.implementation.cache_tag}.pyc"]
    magic, flags = _pyc_header(staged / files[1])
    assert magic == importlib.util.MAGIC_NUMBER and flags == UNCHECKED_HASH
