"""One botocore data loader for every session the local stack's process creates.

Each botocore session builds its own loader, and a loader parses each service model (and the ~1 MB
endpoint list) the first time that session needs it. Inside `baton dev` a session is created by the
stack, by each handler's first call, and by moto's own backends, so the same JSON was parsed six times
over at start-up (the EC2 model three times: moto's Step Functions interpreter imports its Batch and EC2
backends): over a second of CPU before the API answered. While `shared_botocore_loader` is open, sessions
created in this process share one loader, so each file is parsed once, as when one session makes every
client (the parsed models are read-only to botocore).
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextmanager
def shared_botocore_loader() -> Iterator[None]:
    import botocore.loaders
    import botocore.session

    original = botocore.session.create_loader
    botocore.session.create_loader = functools.cache(botocore.loaders.create_loader)  # one loader per data path
    try:
        yield
    finally:
        botocore.session.create_loader = original
