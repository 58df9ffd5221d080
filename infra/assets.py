"""What the deployment uploads from the checkout, and what it leaves out.

One exclude list serves every code asset: the Lambda layer (`layers/baton`, in
`infra/capabilities/functions.py`), each function's folder, and the merge build's package
(`infra/capabilities/merge.py`). The layer ships only what the Lambdas and the merge build import: the
developer CLI (`baton/cli`), the embedded local stack (`baton/local`) and the agent SDK
(`baton/client`) stay behind, and so does bytecode. The in-memory fakes live in `tests/fakes/`, outside
every asset.

Bytecode: the checkout's own `.pyc` files (compiled by this machine's Python, timestamp-checked) stay
behind, and the deployed code is compiled for the Lambda runtime instead. A `.pyc` is read only by the
Python version that wrote it (its magic number), and the functions run Python `RUNTIME_PYTHON` (see
`infra/capabilities/functions.py`), so `compiled_code_asset` stages the asset and compiles it with an
interpreter of that version (`runtime_interpreter`: `$BATON_RUNTIME_PYTHON`, `python3.13` on the PATH,
one pyenv installed, or one uv knows), as unchecked-hash `.pyc` (the deployed files never change, so
nothing is re-checked at import, and the bytes do not depend on file times: the asset hash stays
stable). Without such an interpreter the asset ships as source only, as before, and the synth says so
on stderr. The pure-Python layers staged from installed packages (mcp-types, slack-sdk:
`infra/capabilities/mcp.py`) are compiled the same way (`compile_for_the_runtime`). Nothing in a
function's environment turns bytecode off (`PYTHONPYCACHEPREFIX` would send the runtime looking for it
elsewhere; `tests/infra/test_asset_bytecode.py`). With no `.pyc` a cold start compiles every module it
imports (the API handler: ~3x its import with bytecode, `bench/summary.py`).

`shipped_files` applies the same patterns the way the CDK's glob exclusion does (a pattern without a
slash matches a name at any depth; an excluded folder is not entered); `tests/infra/test_stack.py` checks
it against the asset the CDK staged, and `scripts/check_lambda_imports.py` imports every handler from the
staged assets themselves.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

BYTECODE = ("**/__pycache__", "**/*.pyc", "**/.mypy_cache", "**/.pytest_cache")
# Relative to the layer asset's root (`layers/baton`): code no Lambda and no merge build imports.
NOT_IN_THE_LAYER = ("python/baton/cli", "python/baton/local", "python/baton/client", "python/baton/integrations")
ASSET_EXCLUDE = [*BYTECODE, *NOT_IN_THE_LAYER]


def is_excluded(relative: str, exclude: list[str] = ASSET_EXCLUDE) -> bool:
    """Is this path (relative to the asset root, `/`-separated) left out of the asset? `**/<name>` and
    a bare name match that name at any depth; a pattern with a slash matches from the root."""
    name = PurePosixPath(relative).name
    for pattern in exclude:
        if pattern.startswith("**/") or "/" not in pattern:
            if fnmatch.fnmatchcase(name, pattern.removeprefix("**/")):
                return True
        elif fnmatch.fnmatchcase(relative, pattern):
            return True
    return False


def shipped_files(root: Path, exclude: list[str] = ASSET_EXCLUDE) -> list[str]:
    """The files of the asset at `root`, relative and sorted, as the CDK stages them."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        base = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not is_excluded((base / d).as_posix(), exclude))
        found.extend((base / f).as_posix() for f in files if not is_excluded((base / f).as_posix(), exclude))
    return sorted(found)


def stage(root: Path, destination: Path, exclude: list[str] = ASSET_EXCLUDE) -> Path:
    """Copy the asset at `root` into `destination` as it ships; returns `destination`."""
    for relative in shipped_files(root, exclude):
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target)
    return destination


# ---- bytecode for the Lambda runtime ------------------------------------------------------------------

RUNTIME_PYTHON = "3.13"  # the functions' runtime (infra/capabilities/functions.py RUNTIME): move together


def _version_of(interpreter: str) -> str | None:
    try:
        result = subprocess.run(
            [interpreter, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip()


def _pyenv_interpreters(version: str) -> list[str]:
    """pyenv's installs of `version` (newest first): its shim on the PATH answers only for the versions
    the shell selected, so `python3.13` may fail where pyenv has one (uv then refuses the broken shim)."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = [*root.glob(f"{version}/bin/python{version}"), *root.glob(f"{version}.*/bin/python{version}")]
    return [str(p) for p in sorted(found, key=lambda p: p.parts[-3], reverse=True)]


@functools.cache
def runtime_interpreter(version: str = RUNTIME_PYTHON) -> str | None:
    """A Python of the runtime's version on this machine, or None."""
    candidates = [os.environ.get("BATON_RUNTIME_PYTHON") or "", shutil.which(f"python{version}") or ""]
    candidates += _pyenv_interpreters(version)
    uv = shutil.which("uv")
    if uv:
        found = subprocess.run(
            [uv, "python", "find", version],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"},
            check=False,
        )
        candidates.append(found.stdout.strip() if found.returncode == 0 else "")
    return next((c for c in candidates if c and _version_of(c) == version), None)


def compile_bytecode(folder: Path, interpreter: str) -> None:
    """Compile every module under `folder` with `interpreter`, as unchecked-hash `.pyc` in `__pycache__`."""
    subprocess.run(
        [interpreter, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(folder)],
        check=True,
        capture_output=True,
        timeout=600,
    )


@functools.cache
def _warn_source_only() -> None:
    """Said once per synth, not once per asset."""
    print(
        f"warning: no Python {RUNTIME_PYTHON} on this machine (set BATON_RUNTIME_PYTHON): the code assets "
        "ship without bytecode, so each cold start compiles what it imports",
        file=sys.stderr,
    )


def compile_for_the_runtime(folder: Path) -> bool:
    """Compile a staged asset for the runtime where this machine has its Python (the mcp-types and
    slack-sdk layers, staged from the installed packages); returns whether it was compiled."""
    interpreter = runtime_interpreter()
    if interpreter is None:
        _warn_source_only()
        return False
    compile_bytecode(folder, interpreter)
    return True


def stage_compiled(root: Path, destination: Path, interpreter: str | None, exclude: list[str] = ASSET_EXCLUDE) -> bool:
    """`stage`, then compile the copy for the runtime; returns whether it was compiled."""
    stage(root, destination, exclude)
    if interpreter is None:
        _warn_source_only()
        return False
    compile_bytecode(destination, interpreter)
    return True


def asset_options(path: str) -> dict[str, Any]:
    """The keyword arguments of `lambda_.Code.from_asset` / `s3_assets.Asset` for the asset at `path`:
    staged as `ASSET_EXCLUDE` says and compiled for the runtime where this machine has its Python (a
    local bundler: no Docker), else the plain exclude list (source only, as before)."""
    interpreter = runtime_interpreter()
    if interpreter is None:
        _warn_source_only()
        return {"exclude": ASSET_EXCLUDE}
    import jsii
    from aws_cdk import BundlingOptions, DockerImage, ILocalBundling

    @jsii.implements(ILocalBundling)
    class CompileForTheRuntime:
        def try_bundle(self, output_dir: str, *_: Any, **__: Any) -> bool:
            return stage_compiled(Path(path), Path(output_dir), interpreter)

    # The image is never pulled: the local bundler always succeeds.
    return {"bundling": BundlingOptions(image=DockerImage.from_registry("local-only"), local=CompileForTheRuntime())}
