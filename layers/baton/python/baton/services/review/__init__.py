"""The review-and-merge gate's service, one part per module (builds, dialogue, actions, merge) over the
shared reads and read model of `gate.py`. Its adapters arrive through the ports of `baton/review_ports.py`. The
state machine (statemachines/review_gate.asl.json) calls, in order:

    start_diff -> first_turn -> park -> [reply_turn -> park]* -> start_merge -> record_merge -> (park if rejected)

and each build's end comes back through `build_finished` (the build_finished Lambda).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from baton.domain.review_gate import parse_gate_config
from baton.services.review.actions import ReviewActions
from baton.services.review.dialogue import ReviewDialogue
from baton.services.review.merge import ReviewMerge

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.review_ports import BuildRecords, BuildRunner, Companion, DiffSource
    from baton.services.core import Core

__all__ = ["ReviewService"]


class ReviewService(ReviewDialogue, ReviewActions, ReviewMerge):
    """One door for the handlers, the API and the reconciler: the parts' methods, on one set of ports."""

    def __init__(
        self,
        core: Core,
        *,
        companion: Callable[[], Companion],
        runner: Callable[[], BuildRunner],
        records: BuildRecords,
        diffs: DiffSource | None = None,
        merge_runner_kind: str = "local",
        merge_repository: str = "",
    ) -> None:
        self.core = core
        self.records = records
        self.runner = runner
        self.companion = companion
        self.diffs = diffs if diffs is not None else self  # the stored diff of the gate's diff build
        self.parse_config = partial(
            parse_gate_config, merge_runner=merge_runner_kind, merge_repository=merge_repository
        )
