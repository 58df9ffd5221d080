"""moto is the `local` extra's (pyproject.toml), not the SDK's or the CLI's: they import and run with moto
unimportable, and `baton dev` without it says how to get it (exit 2). The extra pins the range the local
stack is tested with (baton/local/moto_range.py), and `baton dev` refuses a moto outside it.
scripts/check_py311.sh checks the same in an environment synced without the extra."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from typer.testing import CliRunner

from baton.cli.main import app
from baton.local import moto_range
from baton.local.cooperative import cooperative_if_dev
from baton.local.moto_range import TESTED_MOTO_RANGE, in_tested_range, moto_refusal
from tests.probe import ROOT, run_probe

# A meta-path finder ahead of every other: `moto` and its submodules cannot be imported, as where the
# extra is not installed. Then every module of the CLI and the SDK is imported and the CLI run with argv.
_WITHOUT_MOTO = """
import importlib, json, pkgutil, sys


class NoMoto:
    def find_spec(self, name, path=None, target=None):
        if name == "moto" or name.startswith("moto."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoMoto())
import baton, baton.cli, baton.client

imported = []
for package in (baton.cli, baton.client):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if module.name.endswith(".__main__"):  # it runs the CLI on import
            continue
        importlib.import_module(module.name)
        imported.append(module.name)
from baton.cli.main import app

code = 0
try:
    app(json.loads(sys.argv[1]), prog_name="baton")
except SystemExit as exit_:
    code = exit_.code
moto_loaded = sorted(m for m in sys.modules if m == "moto" or m.startswith("moto."))
print(json.dumps({"exit": code, "imported": imported, "moto_loaded": moto_loaded}))
"""


def _run_without_moto(argv: list[str]) -> tuple[dict[str, Any], str]:
    return run_probe(_WITHOUT_MOTO, argv)


def test_the_cli_and_the_sdk_import_and_run_with_moto_unimportable() -> None:
    report, _ = _run_without_moto(["--help"])
    assert report["exit"] == 0
    imported = report["imported"]
    assert isinstance(imported, list)
    assert {"baton.cli.main", "baton.cli.dev", "baton.client.sdk", "baton.client.transport"} <= set(imported)
    assert report["moto_loaded"] == []


def test_baton_dev_without_moto_says_how_to_get_it_and_exits_2(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    report, stderr = _run_without_moto(["dev", "--state-dir", str(state_dir)])
    assert report["exit"] == 2
    assert "the local stack needs moto" in stderr
    assert "pip install 'baton[local]'" in stderr
    assert "uv sync --extra local" in stderr
    assert not state_dir.exists()  # refused before anything started


@pytest.mark.parametrize("installed", ["5.3.0", "5.2.4", "6.0.1", "4.2.14"])
def test_baton_dev_refuses_a_moto_outside_the_tested_range(
    installed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(moto_range, "installed_moto_version", lambda: installed)
    result = CliRunner().invoke(app, ["dev", "--state-dir", str(tmp_path / "state")])
    assert result.exit_code == 2
    said = " ".join(result.output.split())  # the console wraps at its width
    assert f"moto {installed} is installed" in said
    assert f"tested with moto {TESTED_MOTO_RANGE}" in said
    assert "pip install 'baton[local]'" in said
    assert not (tmp_path / "state").exists()


def test_baton_dev_without_gevent_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(moto_range, "gevent_installed", lambda: False)
    refusal = moto_refusal("5.2.6")
    assert refusal is not None and "the local stack needs gevent" in refusal and "baton[local]" in refusal


def test_only_baton_dev_is_made_cooperative() -> None:
    monkey = pytest.importorskip("gevent.monkey")  # the local extra's (scripts/check_py311.sh runs without it)

    for argv in (["baton", "runs", "list"], ["baton", "dev", "--help"], ["baton"]):
        cooperative_if_dev(argv)
    assert not monkey.is_module_patched("threading")  # this test process kept its threads


@pytest.mark.parametrize("installed", ["5.2.5", "5.2.6", "5.2.10", "5.2.7.dev3"])
def test_a_moto_in_the_tested_range_is_accepted(installed: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(moto_range, "gevent_installed", lambda: True)
    assert moto_refusal(installed) is None


@pytest.mark.parametrize(
    "version", ["4.9.9", "5.2", "5.2.4", "5.2.5", "5.2.6", "5.2.10", "5.2.99", "5.3", "5.3.0", "5.10.0", "6.0.0"]
)
def test_the_range_check_agrees_with_the_packaging_specifier(version: str) -> None:
    assert in_tested_range(version) == (version in SpecifierSet(TESTED_MOTO_RANGE))


def test_the_local_extra_pins_the_tested_range_and_the_lock_is_inside_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [r for r in project["dependencies"] if Requirement(r).name == "moto"]
    (local_moto,) = [Requirement(r) for r in project["optional-dependencies"]["local"] if Requirement(r).name == "moto"]
    assert local_moto.specifier == SpecifierSet(TESTED_MOTO_RANGE)
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    (locked_moto,) = [p["version"] for p in lock["package"] if p["name"] == "moto"]
    assert in_tested_range(locked_moto)


def test_installing_baton_without_the_extra_pulls_in_no_moto() -> None:
    """uv.lock's closure of baton's own dependencies (what `pip install baton` installs), extras followed."""
    packages = {p["name"]: p for p in tomllib.loads((ROOT / "uv.lock").read_text())["package"]}
    seen: set[str] = set()
    pending = [dict(d) for d in packages["baton"]["dependencies"]]
    while pending:
        dependency = pending.pop()
        package = packages[dependency["name"]]
        extras = dependency.get("extra", [])
        if dependency["name"] in seen and not extras:
            continue
        seen.add(dependency["name"])
        pending += package.get("dependencies", [])
        for extra in extras:
            pending += package.get("optional-dependencies", {}).get(extra, [])
    assert "boto3" in seen and "typer" in seen  # the walk did reach the SDK's and the CLI's dependencies
    assert "moto" not in seen and "gevent" not in seen
    local = packages["baton"]["optional-dependencies"]["local"]
    assert sorted(d["name"] for d in local) == ["gevent", "moto"]
