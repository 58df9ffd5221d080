"""How the `baton` command is spelled in a printed hint: the form that runs where the user is.

Every hint that names a CLI command goes through `cli_command()`: the notifications
(`notify/model.py how_to_answer_for`, rendered by every channel), `baton workflow inspect`,
`baton review show`, and the `baton dev` banner and demo walkthrough. Stdlib only: the notify
Lambdas import it.

- `BATON_CLI` set: that (the deployment can say how its operators run the CLI).
- In a Lambda: `baton` (the operator reading a Slack message or an email has their own install).
- Under `uv run` (uv sets UV_RUN_RECURSION_DEPTH and puts the venv first on PATH, so `baton` is
  found there only for uv's children): `uv run baton` when `uv` is on PATH, else the venv's script
  (`.venv/bin/baton`), which runs from any shell.
- Otherwise `baton` when the PATH finds this very install, else the venv's script.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

CLI_OVERRIDE_ENV = "BATON_CLI"
PLAIN = "baton"
UV_RUN = "uv run baton"


def _installed_script() -> Path | None:
    """This interpreter's `baton` console script, if it has one."""
    script = Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin") / "baton"
    return script if script.exists() else None


def _shown(script: Path) -> str:
    """The script relative to the working directory when it is below it (`.venv/bin/baton`)."""
    try:
        return str(script.relative_to(Path.cwd()))
    except ValueError:
        return str(script)


def _path_without(folder: Path) -> str:
    """PATH without `folder` (the venv's bin that `uv run` put first for its children only)."""
    entries = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(e for e in entries if e and Path(e).resolve() != folder.resolve())


def _same_file(found: str | None, script: Path) -> bool:
    return found is not None and Path(found).resolve() == script.resolve()


def cli_command() -> str:
    """`baton`, `uv run baton` or the venv's script: what a user here types to run this CLI."""
    override = os.environ.get(CLI_OVERRIDE_ENV)
    if override:
        return override
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        return PLAIN
    script = _installed_script()
    if script is None:
        return PLAIN
    if os.environ.get("UV_RUN_RECURSION_DEPTH"):
        outer_path = _path_without(script.parent)
        if shutil.which("uv", path=outer_path):
            return UV_RUN
        return PLAIN if _same_file(shutil.which("baton", path=outer_path), script) else _shown(script)
    return PLAIN if _same_file(shutil.which("baton"), script) else _shown(script)


def cli(args: str) -> str:
    """A whole command line to print, e.g. `cli("runs show r1")` -> `uv run baton runs show r1`."""
    return f"{cli_command()} {args}"
