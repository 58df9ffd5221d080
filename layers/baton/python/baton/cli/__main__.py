"""`python -m baton.cli`: the same as the `baton` command."""

from __future__ import annotations

from baton.cli.main import main

main()
