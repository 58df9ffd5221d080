"""A blocking ask (`ask_user`) whose agent died still ends at its deadline (on moto, the real adapters):
nobody reads it, its stored deadline passes (an injected clock), and the reconciler's pass
(baton/services/reconciler.py, `AskService.end_due`, a Query of the sparse due index) ends it as the
waiter's read would have: its declared default, else timed out, `human_input_timed_out` recorded and the
run running again; exactly once. A hosted pause (also an `ask`) is left to its token's deadline."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import BlockingAskRequest
from baton.contracts.deadline_tasks import Settled
from baton.domain.ladder import TimeoutDefault
from baton.ids import parse_iso
from baton.services.asks import AskService
from tests.conftest import FixedClock, wait_for

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "ask-sweep"


@pytest.fixture
def clock(moto_stack: MotoStack) -> FixedClock:
    clock = FixedClock(datetime.now(UTC).replace(microsecond=0))
    moto_stack.services.core.clock = clock
    return clock


def _calls(stack: MotoStack) -> Counter[str]:
    seen: Counter[str] = Counter()
    db: Any = stack.services.core.store._db  # the store's own client
    db.meta.events.register("before-call.dynamodb", lambda model, **_: seen.update([model.name]))
    return seen


def _ask(stack: MotoStack, run_id: str, **extra: Any) -> str:
    stack.services.core.ensure_run(run_id)
    request = BlockingAskRequest(node="agent", question="Drop the table?", timeout_seconds=60, **extra)
    return AskService(stack.services.core).ask(run_id, request, caller="agent").interaction_id


def test_an_ask_nobody_reads_times_out_at_its_deadline_and_its_run_runs_again(
    moto_stack: MotoStack, clock: FixedClock
) -> None:
    core, reconciler = moto_stack.services.core, moto_stack.services.reconciler
    iid = _ask(moto_stack, RUN)
    run = core.store.get_run(RUN)
    assert run is not None and run.status == "paused_waiting_human"

    clock.advance(59)  # before its deadline: nothing ends
    assert reconciler.reconcile().ended == []
    pending = core.store.get_interaction(RUN, iid)
    assert pending is not None and pending.state.status == "pending"

    clock.advance(2)  # past it: the agent died, nobody reads the ask
    seen = _calls(moto_stack)
    report = reconciler.reconcile()
    assert report.ended == [Settled(run_id=RUN, interaction_id=iid, kind="ask")]
    assert seen["Scan"] == 0  # the due asks by their index, never a Scan
    ended = core.store.get_interaction(RUN, iid)
    assert ended is not None and (ended.state.status, ended.state.answered_by) == ("timed_out", None)
    run = core.store.get_run(RUN)
    assert run is not None and run.status == "running"
    types = [e.type for e in core.store.list_events(RUN, limit=500)]
    assert types.count("human_input_timed_out") == 1

    # Exactly once: the next pass finds nothing, and the waiter's late read sees it ended.
    assert reconciler.reconcile().ended == []
    assert AskService(core).get(RUN, iid).state.status == "timed_out"
    assert [e.type for e in core.store.list_events(RUN, limit=500)].count("human_input_timed_out") == 1


def test_an_ask_with_a_default_nobody_reads_takes_it_at_its_deadline(moto_stack: MotoStack, clock: FixedClock) -> None:
    core = moto_stack.services.core
    iid = _ask(moto_stack, RUN, options=["yes", "no"], on_timeout=TimeoutDefault(default={"go": "no"}))
    clock.advance(61)
    assert moto_stack.services.reconciler.reconcile().ended == [Settled(run_id=RUN, interaction_id=iid, kind="ask")]
    taken = core.store.get_interaction(RUN, iid)
    assert taken is not None and (taken.state.answer, taken.state.outcome) == ({"go": "no"}, "timed_out_default")
    run = core.store.get_run(RUN)
    assert run is not None and run.status == "running"
    types = [e.type for e in core.store.list_events(RUN, limit=500)]
    assert types.count("timed_out_default") == 1 and "human_input_timed_out" not in types


def test_the_pass_leaves_a_hosted_pause_to_its_tokens_deadline(moto_stack: MotoStack) -> None:
    """A hosted pause is an `ask` too, in the same index: past its deadline the pass reads its wait (one
    GetItem) and leaves it to the parked-wait path (its token's deadline), ending nothing itself."""
    core = moto_stack.services.core
    moto_stack.services.runs.start(
        "human_pause", {"prompt": "Ship?", "timeout_seconds": 600}, run_id="hosted", caller="op"
    )
    wait = wait_for(lambda: core.store.get_wait("hosted", "approve"))
    assert wait.deadline is not None
    core.clock = FixedClock(parse_iso(wait.deadline) + timedelta(seconds=1))
    seen = _calls(moto_stack)
    assert AskService(core).end_due() == []
    assert dict(seen) == {"Query": 1, "GetItem": 1}  # the due asks, then the hosted one's wait
    (pause,) = core.store.list_run_interactions("hosted", kind="ask")
    assert pause.state.status == "pending"
    parked = core.store.get_wait("hosted", "approve")
    assert parked is not None and parked.status == "parked"
