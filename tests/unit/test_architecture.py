"""The house rules, checked on the source: no import cycles, the AWS SDK only where adapters live,
modules small enough to read (docs/architecture.md "Layout" describes the folders these rules keep apart)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from baton.workflows.source_tree import source_tree

PACKAGE = source_tree().layer_dir / "python" / "baton"
ROOTS = {"baton": PACKAGE, "infra": source_tree().root / "infra"}

# Where boto3/botocore may be imported: the adapters, the one place that builds clients, the local
# stack (it provisions moto), and the agent SDK's SigV4 signer (botocore reads the caller's AWS
# credential chain; the client never runs in a Lambda).
AWS_SDK_ALLOWED = ("baton/adapters/", "baton/runtime/wiring.py", "baton/local/", "baton/client/sigv4.py")
MAX_MODULE_LINES = 400
# A longer module says in its docstring why it is over 400 lines.
LONG_MODULE_REASON = "400 lines"


def _module_name(root_name: str, root: Path, path: Path) -> str:
    parts = [root_name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for root_name, root in ROOTS.items():
        for path in root.rglob("*.py"):
            modules[_module_name(root_name, root, path)] = path
    return modules


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, only under TYPE_CHECKING) for every import in the file."""
    tree = ast.parse(path.read_text())
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                for inner in ast.walk(child):
                    typing_only.add(id(inner))
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in typing_only) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in typing_only))
            found += [(f"{node.module}.{alias.name}", id(node) in typing_only) for alias in node.names]
    return found


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        # Typing-only imports count: a type named across a loop ties the two modules as much as a call.
        for imported, _typing_only in _imports(path):
            if imported in modules and imported != name:
                graph[name].add(imported)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    modules = _sources()
    assert len(modules) > 50, "the source tree was not found"
    # A package's __init__ importing its own children is not a cycle of design: leave it out.
    graph = {
        name: {dep for dep in deps if not (modules[name].name == "__init__.py" and dep.startswith(name + "."))}
        for name, deps in _graph(modules).items()
    }
    assert _cycles(graph) == []


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_aws_sdk_only_in_adapters_wiring_and_the_local_stack() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = "baton/" + path.relative_to(PACKAGE).as_posix()
        if relative.startswith(AWS_SDK_ALLOWED):
            continue
        for imported, typing_only in _imports(path):
            if not typing_only and imported.split(".")[0] in {"boto3", "botocore"}:
                offenders.append(f"{relative}: {imported}")
    assert offenders == []


@pytest.mark.parametrize("root_name", sorted(ROOTS))
def test_modules_stay_readable(root_name: str) -> None:
    too_long = []
    for path in ROOTS[root_name].rglob("*.py"):
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES and LONG_MODULE_REASON not in (ast.get_docstring(ast.parse(text)) or ""):
            too_long.append(f"{path.relative_to(ROOTS[root_name])}: {text.count(chr(10))} lines")
    assert too_long == []
