"""`python -m baton.merge`: the merge build's and the local stack's entry point (see `baton/merge/cli.py`)."""

from __future__ import annotations

from baton.merge.cli import main

raise SystemExit(main())
