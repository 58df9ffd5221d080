"""What the AWS emulator may print in `baton dev`'s terminal: moto's Step Functions interpreter logs every
failed state with its whole parse tree, once per nesting level; a run that fails on purpose is already a
line and events of its own, so without -v those reports are dropped."""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

# The interpreter's failure reports: a failure it hands back as the execution's result, which the run's end says.
FAILURE_REPORT_LOGGER = "moto.stepfunctions.parser.asl.component.eval_component"
FAILURE_REPORT_PREFIX = "Stepfunctions computation ended with exception"


@contextlib.contextmanager
def quiet_interpreter() -> Iterator[logging.Handler]:
    """Until exit: the interpreter's records stop at its own logger, whose one handler drops the
    failure reports and prints the rest on stderr (its warnings, as before, stay below ERROR)."""
    logger = logging.getLogger("moto.stepfunctions.parser")
    level, propagate = logger.level, logger.propagate
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(lambda r: r.name != FAILURE_REPORT_LOGGER and not str(r.msg).startswith(FAILURE_REPORT_PREFIX))
    handler.setFormatter(logging.Formatter("emulator: %(message)s"))
    logger.setLevel(logging.ERROR)
    logger.propagate = False
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
