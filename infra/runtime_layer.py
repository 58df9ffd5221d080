"""The runtime layer: the libraries Baton's Lambda code imports (Powertools with its tracer and validation
extras, pydantic, and what they need), at the versions uv.lock pins, so the functions run exactly what
the test suite ran. It replaces the AWS-managed Powertools layer, whose Powertools was older than the
lock (and the suite failed on it: see tests/infra/test_runtime_layer.py).

What it holds is `locked_closure()`: `ROOTS` and everything they depend on in uv.lock (markers evaluated
for the Lambda runtime: Python `RUNTIME_PYTHON` on Linux arm64), without what the runtime itself provides
(`PROVIDED_BY_THE_RUNTIME`: boto3, botocore, and what only they need). `MANIFEST` (committed) lists it as
`name==version`, so a change shows in review; a test and every build compare the two.

`build()` installs it without Docker: uv downloads PyPI's wheels for the target platform
(`--python-platform`, `--only-binary :all:`, the lock's hashes required), as Powertools' own end-to-end
tests build theirs, into `.cache/runtime-layer/<platform>-<digest>/python` (not committed; a new digest
when the manifest changes). uv's cache serves it offline after the first time (`--offline` is tried
first). The arm64 build is the deployed asset (`infra/capabilities/functions.py`); a build for this
machine's platform (the same versions, its own native wheels) is what the import check imports
(`scripts/check_lambda_imports.py`), since arm64's compiled modules do not load here.

Usage: python -m infra.runtime_layer [build|check|manifest]
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.markers import Marker
from packaging.utils import canonicalize_name

from infra.assets import RUNTIME_PYTHON, compile_for_the_runtime

if TYPE_CHECKING:
    from collections.abc import Mapping

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "uv.lock"
MANIFEST = ROOT / "infra" / "runtime_layer.txt"
CACHE = ROOT / ".cache" / "runtime-layer"
# What Baton's Lambda code imports at run time, beyond itself and the per-function layers (mcp-types,
# slack-sdk: infra/capabilities/mcp.py, slack.py). Extras as in pyproject.toml's dependency.
# google-re2: the engine answer schemas' patterns run in (baton/domain/linear_patterns.py).
# cedarpy: the policy engine deciding tool calls (baton/policy/engine.py).
ROOTS: dict[str, tuple[str, ...]] = {
    "aws-lambda-powertools": ("tracer", "validation"),
    "pydantic": (),
    "google-re2": (),
    "cedarpy": (),
    # pywebpush: Web Push to operators' devices (baton/channels/push/), from the API and gate_deadline functions.
    "pywebpush": (),
    # webauthn: the passkey step-up on a risky approval (baton/services/passkeys.py), from the API function.
    "webauthn": (),
}
# The Lambda Python runtime ships these (and what they depend on): the layer leaves them out.
# urllib3 is botocore's: requests (pywebpush's) runs on the runtime's copy, as boto3 does.
PROVIDED_BY_THE_RUNTIME = ("boto3", "botocore", "urllib3")
# ARCHITECTURE arm64 (infra/capabilities/functions.py). python3.13 runs on Amazon Linux 2023 (glibc 2.34), which
# loads manylinux_2_28 wheels, the oldest google-re2 publishes (manylinux2014's are a subset of these).
MANYLINUX = "manylinux_2_28"
LAMBDA_PLATFORM = f"aarch64-{MANYLINUX}"
# Markers as the Lambda runtime evaluates them (PEP 508 environment of python3.13 on Amazon Linux arm64).
LAMBDA_MARKERS = {
    "python_version": RUNTIME_PYTHON,
    "python_full_version": f"{RUNTIME_PYTHON}.0",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "os_name": "posix",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "aarch64",
    "extra": "",
}


@dataclass(frozen=True)
class Pin:
    """One locked distribution: its name, version and the sha256 hashes of its wheels in uv.lock."""

    name: str
    version: str
    hashes: tuple[str, ...] = ()
    sdist_only: bool = False  # no wheel on PyPI: built from its sdist (pure Python only: any platform)

    @property
    def line(self) -> str:
        return f"{self.name}=={self.version}"


def _applies(dependency: dict[str, object]) -> bool:
    marker = dependency.get("marker")
    return marker is None or Marker(str(marker)).evaluate(dict(LAMBDA_MARKERS))


def locked_closure(
    lock: Path = LOCK,
    roots: Mapping[str, tuple[str, ...]] = ROOTS,
    provided: tuple[str, ...] = PROVIDED_BY_THE_RUNTIME,
) -> list[Pin]:
    """`roots` (name -> extras) and their dependencies as uv.lock pins them, minus `provided` and what
    only they need; sorted."""
    packages: dict[str, dict[str, Any]] = {
        canonicalize_name(p["name"]): p for p in tomllib.loads(lock.read_text())["package"]
    }
    skipped = {canonicalize_name(n) for n in provided}
    wanted: list[tuple[str, tuple[str, ...]]] = [(canonicalize_name(n), e) for n, e in roots.items()]
    found: dict[str, Pin] = {}
    seen: set[tuple[str, str]] = set()
    while wanted:
        name, extras = wanted.pop()
        if name in skipped:
            continue
        package = packages.get(name)
        if package is None:
            raise RuntimeError(f"{name} is not in {lock}: run `uv lock`")
        hashes = tuple(sorted(w["hash"] for w in package.get("wheels", ())))
        if not hashes and "sdist" in package:  # pure Python published as an sdist only (http-ece)
            hashes = (package["sdist"]["hash"],)
        found[name] = Pin(package["name"], package["version"], hashes, sdist_only=not package.get("wheels"))
        groups = [("", package.get("dependencies", []))]
        groups += [(extra, package.get("optional-dependencies", {}).get(extra, [])) for extra in extras]
        for group, dependencies in groups:
            if (name, group) in seen:
                continue
            seen.add((name, group))
            wanted += [(canonicalize_name(d["name"]), tuple(d.get("extra", ()))) for d in dependencies if _applies(d)]
    return sorted(found.values(), key=lambda pin: pin.name)


MANIFEST_HEADER = (
    "# The runtime layer's contents (infra/runtime_layer.py): uv.lock's pins of what Baton's Lambda code\n"
    "# imports, less what the Lambda runtime provides. Regenerate: python -m infra.runtime_layer manifest\n"
)


def manifest_text(pins: list[Pin]) -> str:
    return MANIFEST_HEADER + "".join(f"{pin.line}\n" for pin in pins)


def manifest_lines(manifest: Path = MANIFEST) -> list[str]:
    return [line for line in manifest.read_text().splitlines() if line and not line.startswith("#")]


def check_manifest(lock: Path = LOCK, manifest: Path = MANIFEST) -> list[Pin]:
    """The locked closure, if `manifest` lists exactly it; else a RuntimeError saying what differs."""
    pins = locked_closure(lock)
    listed, locked = set(manifest_lines(manifest)), {pin.line for pin in pins}
    if listed != locked:
        raise RuntimeError(
            f"{manifest.name} and uv.lock disagree (only in the manifest: {sorted(listed - locked)}; only in "
            f"the lock: {sorted(locked - listed)}): run `python -m infra.runtime_layer manifest`"
        )
    return pins


def description(manifest: Path = MANIFEST) -> str:
    """The layer's description (at most 256 characters): its roots' versions."""
    lines = manifest_lines(manifest)
    roots = [line for line in lines if canonicalize_name(line.split("==")[0]) in ROOTS]
    return (
        f"{', '.join(roots)} and {len(lines) - len(roots)} dependencies, as uv.lock pins them (infra/runtime_layer.txt)"
    )


def host_platform() -> str:
    """uv's `--python-platform` for this machine (the import check's twin of the layer)."""
    return f"{platform.machine()}-{MANYLINUX}"


def uv_command() -> list[str]:
    """uv as scripts/bootstrap.sh finds it: `$BATON_UV`, `python3 -m uv`, `.tools/bin/uv`, or on the PATH."""
    if os.environ.get("BATON_UV"):
        return [os.environ["BATON_UV"]]
    for candidate in ([sys.executable, "-m", "uv"], ["python3", "-m", "uv"], [str(ROOT / ".tools" / "bin" / "uv")]):
        try:
            subprocess.run([*candidate, "--version"], capture_output=True, check=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        return candidate
    found = shutil.which("uv")
    if found is None:
        raise RuntimeError("no uv on this machine: run `make bootstrap`")
    return [found]


def _install(pins: list[Pin], target: Path, python_platform: str, requirements: Path) -> None:
    requirements.write_text("".join(f"{p.line} {' '.join(f'--hash={h}' for h in p.hashes)}\n" for p in pins))
    command = [
        *uv_command(),
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--require-hashes",
        "--only-binary",
        ":all:",
        *(arg for p in pins if p.sdist_only for arg in ("--no-binary", p.name)),
        "--python-platform",
        python_platform,
        "--python-version",
        RUNTIME_PYTHON,
        "--target",
        str(target),
        "-r",
        str(requirements),
    ]
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    # From uv's cache first (no network once it has the wheels), then from PyPI.
    offline = subprocess.run([*command, "--offline"], capture_output=True, text=True, env=env, check=False)
    if offline.returncode != 0:
        online = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if online.returncode != 0:
            raise RuntimeError(f"building the runtime layer failed:\n{online.stderr}")


def build(python_platform: str = LAMBDA_PLATFORM, *, cache: Path = CACHE) -> Path:
    """The layer for `python_platform` (its root: `python/` inside), built once per manifest digest."""
    return _build(check_manifest(), python_platform, cache / python_platform)


def build_runtime_sdk(cache: Path = CACHE) -> Path:
    """boto3 and botocore (with what they need) at uv.lock's versions, for this machine: the import check's
    stand-in for the SDK the Lambda runtime provides (its `python/` goes last on the path, as there)."""
    return _build(locked_closure(roots={"boto3": ()}, provided=()), host_platform(), cache / "sdk")


def _build(pins: list[Pin], python_platform: str, prefix: Path) -> Path:
    cache = prefix.parent
    digest = hashlib.sha256(f"{python_platform} {RUNTIME_PYTHON}\n{manifest_text(pins)}".encode()).hexdigest()
    folder = cache / f"{prefix.name}-{digest[:16]}"
    if (folder / "python").is_dir():
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    # Built beside its final place and renamed into it: a concurrent build (another test worker) loses
    # the rename and keeps the winner's copy.
    with tempfile.TemporaryDirectory(dir=cache, prefix=".building-") as building:
        staged = Path(building) / "layer"
        _install(pins, staged / "python", python_platform, Path(building) / "requirements.txt")
        shutil.rmtree(staged / "python" / "bin", ignore_errors=True)  # console scripts: nothing runs them
        compile_for_the_runtime(staged)
        try:
            staged.rename(folder)
        except OSError:
            if not (folder / "python").is_dir():
                raise
    return folder


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "build"
    if command == "manifest":
        MANIFEST.write_text(manifest_text(locked_closure()))
    elif command == "check":
        check_manifest()
    elif command == "build":
        print(build())
        print(build(host_platform()))
        print(build_runtime_sdk())
    else:
        print(__doc__.splitlines()[-1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
