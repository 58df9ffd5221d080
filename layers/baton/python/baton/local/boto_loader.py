"""One botocore data loader for every session of the local stack's process: each service model (and the
~1 MB endpoint list) is parsed once, not once per session (the stack's, each handler's, moto's backends':
over a second of CPU at start-up). The parsed models are read-only to botocore."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from baton.local.moto_fixes import patched

if TYPE_CHECKING:
    from contextlib import AbstractContextManager


def shared_botocore_loader() -> AbstractContextManager[None]:
    import botocore.loaders
    import botocore.session

    return patched(botocore.session, {"create_loader": functools.cache(botocore.loaders.create_loader)})
