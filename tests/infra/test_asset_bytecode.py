"""The deployed code carries bytecode for the Lambda runtime (infra/assets.py): the staged copy is
compiled by an interpreter of the runtime's version, as unchecked-hash `.pyc`, and the CDK asset is
that copy. This machine's own Python stands in for the runtime's here (its magic number is checked)."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path
from typing import Any

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
    monkeypatch.setenv("PYENV_ROOT", "/nonexistent")  # nor pyenv
    assets.runtime_interpreter.cache_clear()
    try:
        assert assets.runtime_interpreter(THIS_VERSION) == sys.executable
        assert assets.runtime_interpreter("2.7") is None  # the variable names another version: refused
    finally:
        assets.runtime_interpreter.cache_clear()


def test_the_runtime_interpreter_is_found_among_pyenvs_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pyenv's shim answers only for the versions the shell selected: its installs are looked at directly.
    installed = tmp_path / "versions" / f"{THIS_VERSION}.99" / "bin"
    installed.mkdir(parents=True)
    (installed / f"python{THIS_VERSION}").symlink_to(sys.executable)
    monkeypatch.delenv("BATON_RUNTIME_PYTHON", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assets.runtime_interpreter.cache_clear()
    try:
        assert assets.runtime_interpreter(THIS_VERSION) == str(installed / f"python{THIS_VERSION}")
        assert assets.runtime_interpreter("3.99") is None
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


# ---- the synthesized stack: every code asset as it deploys ----------------------------------------------


def _asset_folders(cfn: dict[str, Any], synthesized: Any) -> dict[str, Path]:
    """Each Lambda layer and function of the template -> the folder the CDK staged for its code."""
    manifest = json.loads((synthesized.outdir / f"{synthesized.stack.stack_name}.assets.json").read_text())

    def folder(s3_key: Any) -> Path:
        asset_hash = str(s3_key).rsplit("/", 1)[-1].removesuffix(".zip")
        path: Path = synthesized.outdir / manifest["files"][asset_hash]["source"]["path"]
        return path

    found = {
        v["Properties"]["LayerName"]: folder(v["Properties"]["Content"]["S3Key"])
        for v in cfn["Resources"].values()
        if v["Type"] == "AWS::Lambda::LayerVersion"
    }
    found |= {
        v["Properties"]["FunctionName"]: folder(v["Properties"]["Code"]["S3Key"])
        for v in cfn["Resources"].values()
        if v["Type"] == "AWS::Lambda::Function" and str(v["Properties"].get("FunctionName", "")).startswith("baton-")
    }
    return found


def _uncompiled(folder: Path, tag: str) -> list[str]:
    """The modules under `folder` without an unchecked-hash `.pyc` of `tag` beside them."""
    missing = []
    for module in sorted(folder.rglob("*.py")):
        pyc = module.parent / "__pycache__" / f"{module.stem}.{tag}.pyc"
        if not pyc.is_file() or pyc.read_bytes()[4:8] != struct.pack("<I", UNCHECKED_HASH):
            missing.append(module.relative_to(folder).as_posix())
    return missing


def test_every_layer_and_function_asset_of_the_stack_carries_bytecode_for_every_module(
    cfn: dict[str, Any], synthesized: Any
) -> None:
    # Compiled by the runtime's Python where this machine has one (cpython-313), else by this interpreter
    # standing in for it (tests/infra/conftest.py): either way every module of every asset has its .pyc.
    runtime = assets.runtime_interpreter()
    tag = f"cpython-{assets.RUNTIME_PYTHON.replace('.', '')}" if runtime else sys.implementation.cache_tag
    folders = _asset_folders(cfn, synthesized)
    layer, api, park = (folders[f"baton-ci-{name}"] for name in ("baton", "api", "park"))
    assert "baton-ci-mcp-types" in folders and "baton-ci-slack-sdk" in folders
    for name, folder in folders.items():
        assert list(folder.rglob("*.py")), name
        assert _uncompiled(folder, tag) == [], name
        assert not [p for p in folder.rglob("*.pyc") if f".{tag}." not in p.name], name  # no stray bytecode
    assert (layer / "python/baton/runtime/__pycache__" / f"wiring.{tag}.pyc").is_file()
    assert (api / "__pycache__" / f"handler.{tag}.pyc").is_file() and (park / "__pycache__").is_dir()


def test_no_function_environment_turns_bytecode_off(cfn: dict[str, Any]) -> None:
    # PYTHONPYCACHEPREFIX would make the runtime look for .pyc elsewhere (the shipped ones unread);
    # PYTHONDONTWRITEBYTECODE and -B (PYTHONDONTWRITEBYTECODE's flag) set by hand mean someone meant to.
    functions = [v for v in cfn["Resources"].values() if v["Type"] == "AWS::Lambda::Function"]
    assert len(functions) > 20
    for function in functions:
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        assert not [name for name in variables if name.startswith("PYTHON")], function["Properties"]["FunctionName"]
