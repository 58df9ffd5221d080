"""`python -m baton.merge`: the merge build's and the local stack's entry point (see `squash.main`)."""

from __future__ import annotations

from baton.merge.squash import main

raise SystemExit(main())
