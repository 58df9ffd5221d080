"""pyproject.toml has mypy skip the aws_cdk modules nothing of Baton's reaches (most of a cold run went
on them); this recomputes, from the files alone, which ones are reached, and fails when one of those is
not in the list mypy follows, so a module infra/ starts to use is never silently Any."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.find_spec("aws_cdk")  # found, not imported: importing it starts jsii's node runtime
assert _SPEC is not None and _SPEC.origin is not None
CDK = Path(_SPEC.origin).parent
# aws_cdk's root module and its `interfaces` package import every service module for type checkers; the
# modules that name a type import only what they use, so the walk does not follow these two.
BLANKET = {"aws_cdk", "aws_cdk.interfaces"}
ABSOLUTE = re.compile(r"^\s*(?:import|from) (aws_cdk(?:\.\w+)*)", re.M)
RELATIVE = re.compile(r"^\s*from (\.+)(\w+(?:\.\w+)*) import", re.M)
NAMED = re.compile(r"^\s*from aws_cdk import ([\w, ()]+)", re.M)


def _source(module: str) -> Path | None:
    folder = CDK.joinpath(*module.split(".")[1:])
    for candidate in (folder / "__init__.py", folder.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imports(module: str, text: str) -> set[str]:
    found = set(ABSOLUTE.findall(text))
    package = module.split(".")
    for dots, name in RELATIVE.findall(text):
        if len(dots) <= len(package):  # deeper than the top: a docstring's example, not an import
            found.add(".".join([*package[: len(package) - len(dots) + 1], name]))
    for names in NAMED.findall(text):  # `from aws_cdk import aws_iam as iam`: the submodule itself
        found |= {f"aws_cdk.{word}" for word in re.findall(r"\b(aws_\w+|custom_resources|interfaces)\b", names)}
    return found


def reached_cdk_modules() -> set[str]:
    """The aws_cdk modules infra/ imports, and those their signatures and base classes import in turn."""
    todo = set()
    for path in (ROOT / "infra").rglob("*.py"):
        todo |= {name for name in _imports("infra", path.read_text()) if name.startswith("aws_cdk")}
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        source = _source(module)
        if module in seen or source is None:
            continue
        seen.add(module)
        if module not in BLANKET:
            todo |= {name for name in _imports(module, source.read_text()) if name.startswith("aws_cdk")}
        else:
            todo |= {name for name in _imports(module, source.read_text()) if name.endswith("._jsii")}
    return seen


def _followed_by_mypy() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    followed = set()
    for override in config["tool"]["mypy"]["overrides"]:
        if override.get("follow_imports") == "normal":
            followed |= set(override["module"])
    return followed


def test_mypy_follows_every_aws_cdk_module_infra_reaches() -> None:
    reached = reached_cdk_modules()
    assert {"aws_cdk", "aws_cdk.aws_lambda", "aws_cdk.aws_stepfunctions"} <= reached  # the walk found infra/
    missing = sorted(reached - _followed_by_mypy())
    assert not missing, f"add to pyproject.toml's follow_imports = 'normal' list for aws_cdk: {missing}"
