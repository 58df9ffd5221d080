"""Every deployed function imports its handler, and every module the handler can reach, with only what
the deployment gives it: as Lambda does, on Python 3.13, from the synthesized cloud assembly.

For each `AWS::Lambda::Function` of the template in `cdk.out`, its code asset and its layers' assets
(found through the asset manifest by their S3 keys) are the path, with the runtime's SDK last (boto3 and
botocore at uv.lock's versions, `infra/runtime_layer.py build_runtime_sdk`): `python3.13 -I -S` (no
site-packages, no PYTHONPATH, no current folder), `sys.path` exactly `[code, *layers' python/,
*stdlib, sdk]`. The runtime layer's arm64 compiled modules do not load on this machine, so its twin built
for this machine from the same manifest stands in for it (checked to hold the same distributions and
Python files).

What "reachable" means: the handler's imports, and, in Baton's own code (the code asset and the layers
that hold `baton`), every import statement anywhere in a module (inside functions too: the lazy ones),
except under `if TYPE_CHECKING:` and in a `try` that handles ImportError; `importlib.import_module` with
a literal name, or an f-string naming a package's submodule (`f"baton.api.{family}"`), reaches that
module, or every submodule of that package. Other libraries are imported, not walked.

A handler that reaches a module the function does not ship fails, naming the function, the module and
the module that imports it. Layers that ship the same file (Lambda merges them into /opt, the later
one winning) fail too.

Usage: uv run python scripts/check_lambda_imports.py [--cdk-out DIR] [--python PYTHON] [--function NAME]...
       (without --cdk-out it synthesizes the app first; exit 1 on any failure)
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from infra.assets import runtime_interpreter  # noqa: E402
from infra.runtime_layer import build, build_runtime_sdk, host_platform  # noqa: E402

OWN_PACKAGE = "baton"  # a layer holding it is Baton's own code: walked, not only imported
# Lazy imports of what no function ships that no deployed code can reach, each with why: (importer, module).
NEVER_CALLED_IN_LAMBDA = {
    ("baton", "baton.client"): "baton.__getattr__('Client'), the SDK's short name: no deployed code reads it",
}


# The synth this script makes without --cdk-out: every optional function and layer deployed (the audit
# archive; notify_slack as the Slack app, with slack-sdk), so each conditional import is checked where it ships.
EVERY_PART_ON = {
    "emails": "ops@example.com",
    "email_sender": "baton@example.com",
    "webhook_url": "https://hooks.example.com/baton",
    "audit_bucket": "true",
    "slack_channel": "C0123ABCD",
}


@dataclass(frozen=True)
class Deployed:
    """One function as the template deploys it: its code asset and its layers' assets, in order."""

    name: str
    handler: str
    code: Path
    layers: tuple[Path, ...]
    errors: tuple[str, ...] = field(default=())


def _assets(outdir: Path, template: Path) -> dict[str, Path]:
    """S3 key (`<hash>.zip`) -> the staged folder, from the stack's asset manifest."""
    manifest = json.loads((outdir / template.name.replace(".template.json", ".assets.json")).read_text())
    return {f"{h}.zip": outdir / f["source"]["path"] for h, f in manifest["files"].items()}


def deployed_functions(outdir: Path) -> list[Deployed]:
    """Every function of every stack template in `outdir` (nested templates have no functions here)."""
    found: list[Deployed] = []
    for template in sorted(outdir.glob("*.template.json")):
        if not (outdir / template.name.replace(".template.json", ".assets.json")).is_file():
            continue
        resources: dict[str, Any] = json.loads(template.read_text())["Resources"]
        assets = _assets(outdir, template)
        for function in (r["Properties"] for r in resources.values() if r["Type"] == "AWS::Lambda::Function"):
            name = str(function.get("FunctionName", "?"))
            errors: list[str] = []
            code = assets.get(str(function["Code"].get("S3Key", "")))
            if code is None:
                errors.append(f"its code is not an asset of this synth: {function['Code']}")
            layers: list[Path] = []
            for layer in function.get("Layers", []):
                ref = layer.get("Ref") if isinstance(layer, dict) else None
                content = resources.get(str(ref), {}).get("Properties", {}).get("Content", {})
                asset = assets.get(str(content.get("S3Key", "")))
                if asset is None:
                    errors.append(f"a layer not built by this synth, so not checked: {json.dumps(layer)}")
                else:
                    layers.append(asset)
            found.append(Deployed(name, str(function["Handler"]), code or Path(), tuple(layers), tuple(errors)))
    return found


def _files(folder: Path, suffixes: tuple[str, ...] = ()) -> set[str]:
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and (not suffixes or p.suffix in suffixes)
    }


def _for_this_machine(layer: Path, twins: list[Path]) -> tuple[Path, str | None]:
    """The folder to import `layer` from here: itself, or (a layer with another machine's compiled
    modules) the twin built for this machine that holds the same distributions and Python files."""
    if not any(p.suffix == ".so" for p in (layer / "python").glob("**/*.so")):
        return layer, None
    dists = {p.name for p in (layer / "python").glob("*.dist-info")}
    for twin in twins:
        if {p.name for p in (twin / "python").glob("*.dist-info")} == dists:
            if _files(layer, (".py",)) != _files(twin, (".py",)):
                return layer, f"its twin for this machine ({twin}) differs in its Python files"
            return twin, None
    return layer, "it has compiled modules for another machine and no twin for this one (infra/runtime_layer.py)"


def _collisions(layers: tuple[Path, ...]) -> Iterator[str]:
    """Files two layers both ship with different content: Lambda keeps only the later layer's."""
    seen: dict[str, Path] = {}
    for layer in layers:
        for relative in sorted(_files(layer)):
            earlier = seen.get(relative)
            if earlier is not None and not filecmp.cmp(earlier / relative, layer / relative, shallow=False):
                yield f"layers {earlier.name} and {layer.name} both ship {relative}"
            seen[relative] = layer


# Runs in the sandbox interpreter (`-I -S`): the standard library only. argv[1]: JSON of the paths and
# the functions to import (one process per set of layers: the functions of a set differ only in their
# code folder, which holds their handler alone).
_SANDBOX = r"""
import ast, importlib, importlib.util, json, os, pkgutil, sys
plan = json.loads(sys.argv[1])
stdlib = [p for p in sys.path if p]
own_roots = tuple(plan["own"])
failed = {}

def is_own(module):
    origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
    return origin.endswith(".py") and origin.startswith(own_roots)

def catches_import_error(node):
    names = []
    for handler in node.handlers:
        kind = handler.type
        names += [kind] if kind is None or not isinstance(kind, ast.Tuple) else kind.elts
    text = [ast.unparse(n) if n is not None else "" for n in names]
    return any(t in ("", "ImportError", "ModuleNotFoundError", "Exception", "BaseException") for t in text)

def exists(name):
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:  # its package does not import: the walk reports that package itself
        return False

def submodules(package):
    try:
        module = importlib.import_module(package)
    except Exception:
        return [package]
    path = getattr(module, "__path__", None)
    return [package] + ([f"{package}.{m.name}" for m in pkgutil.iter_modules(path)] if path else [])

def imports_of(module):
    name, is_package = module.__name__, hasattr(module, "__path__")
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(open(module.__spec__.origin, encoding="utf-8").read())
    found = []
    def visit(node):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Try) and catches_import_error(node):
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = ".".join(p for p in ((base if node.level else ""), node.module or "") if p)
            found.append(target)
            if exists(target):  # `from package import submodule` imports the submodule too
                found.extend(f"{target}.{a.name}" for a in node.names if exists(f"{target}.{a.name}"))
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module"):
            argument = node.args[0] if node.args else None
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found.append(argument.value)
            elif isinstance(argument, ast.JoinedStr):
                prefix = ""
                for part in argument.values:
                    if isinstance(part, ast.Constant):
                        prefix += str(part.value)
                    elif ast.unparse(part.value) == "__name__":
                        prefix += name
                    else:
                        break
                if prefix.endswith("."):
                    found.extend(submodules(prefix[:-1]))
        for child in ast.iter_child_nodes(node):
            visit(child)
    visit(tree)
    return found

def check(function):
    sys.path[:] = [function["code"], *plan["layers"], *stdlib, plan["sdk"]]
    os.environ.update({"LAMBDA_TASK_ROOT": function["code"], "AWS_LAMBDA_FUNCTION_NAME": function["name"]})
    sys.modules.pop(function["module"], None)
    failures, walked, queue = [], set(), [(function["module"], "the runtime")]
    while queue:
        name, importer = queue.pop()
        if name in walked:
            continue
        walked.add(name)
        try:
            module = importlib.import_module(name)
        except BaseException as err:
            if [importer, name] in plan["never_called"]:
                continue
            failures.append(f"{name} (imported by {importer}): {type(err).__name__}: {err}")
            continue
        if name == function["module"] or is_own(module):
            queue.extend((found, name) for found in imports_of(module) if found not in walked)
    return {"name": function["name"], "modules": len(walked), "failures": failures}

print(json.dumps([check(f) for f in plan["functions"]]))
"""


def check(outdir: Path, python: str, only: list[str] | None = None) -> int:
    functions = [f for f in deployed_functions(outdir) if not only or f.name in only]
    if not functions:
        print(f"FAIL: no function{' named ' + ', '.join(only) if only else ''} in {outdir}")
        return 1
    twins = [build(host_platform())]
    sdk = build_runtime_sdk() / "python"
    failures = 0
    groups: dict[tuple[Path, ...], list[Deployed]] = {}
    for function in functions:
        problems = list(function.errors) + list(_collisions(function.layers))
        if problems:
            failures += 1
            print(f"FAIL {function.name}: " + "; ".join(problems))
            continue
        groups.setdefault(function.layers, []).append(function)
    for layers, members in groups.items():
        paths: list[str] = []
        own = [str(m.code) for m in members]
        for layer in reversed(layers):  # the later layer's files win in /opt
            folder, problem = _for_this_machine(layer, twins)
            if problem is not None:
                failures += len(members)
                print(f"FAIL {', '.join(m.name for m in members)}: layer {layer.name}: {problem}")
                break
            paths += [str(p) for p in (folder / "python" / "lib" / "python3.13" / "site-packages", folder / "python")]
            if (folder / "python" / OWN_PACKAGE).is_dir():
                own.append(str(folder / "python"))
        else:
            failures += _run(python, members, paths, own, sdk)
    return failures


def _run(python: str, members: list[Deployed], paths: list[str], own: list[str], sdk: Path) -> int:
    plan = {
        "layers": paths,
        "own": [p.rstrip("/") + "/" for p in own],
        "sdk": str(sdk),
        "never_called": [list(edge) for edge in NEVER_CALLED_IN_LAMBDA],
        "functions": [{"name": m.name, "code": str(m.code), "module": m.handler.rsplit(".", 1)[0]} for m in members],
    }
    env = {
        "PATH": os.environ.get("PATH", ""),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "BATON_TABLE_NAME": "import-check",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    with tempfile.TemporaryDirectory(prefix="baton-import-check-") as cwd:  # nothing of the checkout beside it
        result = subprocess.run(
            [python, "-I", "-S", "-c", _SANDBOX, json.dumps(plan)],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=600,
            check=False,
        )
    if result.returncode != 0:
        print(f"FAIL {', '.join(m.name for m in members)}: the sandbox failed:\n{result.stderr}")
        return len(members)
    failures = 0
    for report in json.loads(result.stdout.strip().splitlines()[-1]):
        if report["failures"]:
            failures += 1
            print(f"FAIL {report['name']}: " + "; ".join(report["failures"]))
        else:
            print(f"ok   {report['name']} ({report['modules']} modules)")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cdk-out", type=Path, help="a synthesized cloud assembly (default: synthesize one)")
    parser.add_argument("--python", help="the runtime's Python (default: infra/assets.py runtime_interpreter)")
    parser.add_argument("--function", action="append", help="check only this function (FunctionName); repeatable")
    args = parser.parse_args(argv)
    python = args.python or runtime_interpreter()
    if python is None:
        print("FAIL: no Python 3.13 (the Lambda runtime's) on this machine: set BATON_RUNTIME_PYTHON")
        return 1
    if args.cdk_out is not None:
        return 1 if check(args.cdk_out, python, args.function) else 0
    from infra.synth import synthesize

    with tempfile.TemporaryDirectory(prefix="baton-cdk-out-") as outdir:
        synthesize("check", Path(outdir), context=EVERY_PART_ON, nag=False)
        return 1 if check(Path(outdir), python, args.function) else 0


if __name__ == "__main__":
    sys.exit(main())
