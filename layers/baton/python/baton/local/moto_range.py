"""The moto versions the local stack is tested with, and the check `baton dev` runs before it starts: the
patches here reach into moto 5.2's internals, so another moto is refused in words. Imports nothing of moto."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re

# pyproject.toml's `local` extra states exactly this range (tests/unit/test_local_extra.py); uv.lock's moto is in it.
TESTED_MOTO_LOWEST = (5, 2, 5)
TESTED_MOTO_BELOW = (5, 3)
TESTED_MOTO_RANGE = f">={'.'.join(map(str, TESTED_MOTO_LOWEST))},<{'.'.join(map(str, TESTED_MOTO_BELOW))}"

INSTALL_HINT = "pip install 'baton[local]' (in a checkout: uv sync --extra local, or make bootstrap)"

_RELEASE = re.compile(r"\d+(?:\.\d+)*")


def installed_moto_version() -> str | None:
    """moto's installed version, or None when it cannot be imported (the `local` extra is not installed)."""
    try:
        return importlib.metadata.version("moto") if importlib.util.find_spec("moto") else None
    except ImportError:  # also PackageNotFoundError: importable files without an installed distribution
        return None


def in_tested_range(version: str) -> bool:
    """Whether `version`'s release numbers (5.2.7 of 5.2.7.dev1) lie in the tested range."""
    release = _RELEASE.match(version)
    return release is not None and TESTED_MOTO_LOWEST <= tuple(map(int, release.group().split("."))) < TESTED_MOTO_BELOW


def moto_refusal(installed: str | None) -> str | None:
    """Why the local stack will not run on this moto (in words, with the command that fixes it), or None
    when it will."""
    if installed is None:
        return f"the local stack needs moto, which comes with Baton's `local` extra: {INSTALL_HINT}"
    if not in_tested_range(installed):
        return (
            f"moto {installed} is installed, but the local stack is tested with moto {TESTED_MOTO_RANGE} "
            f"(it patches moto's internals); install a tested moto: {INSTALL_HINT}"
        )
    if not gevent_installed():
        return f"the local stack needs gevent, which comes with Baton's `local` extra: {INSTALL_HINT}"
    return None


def gevent_installed() -> bool:
    """Whether gevent, which runs `baton dev` on greenlets (`baton.local.cooperative`), can be imported."""
    return importlib.util.find_spec("gevent") is not None
