"""Item 6 of issue 10: the CDK helpers (infra/gate.py) run `baton check`'s gate checks
(baton/workflows/gate_checks.py) and a bad configuration fails the synth with the code and the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.infra

CONFIG = {"gate": "ship", "run_branch": "baton/run-42", "merge_into": "main", "timeout_seconds": 3600}


def _stack(tmp_path: Path) -> tuple[Any, Any, Any]:
    from aws_cdk import App, Stack

    from infra.gate import BatonRef

    app = App(outdir=str(tmp_path))
    stack = Stack(app, "UserFlow")
    return app, stack, BatonRef.from_exports(stack, "Baton", team="ci")


def _machine(stack: Any, *states: Any) -> None:
    from aws_cdk import aws_stepfunctions as sfn

    chain: Any = states[0]
    for state in states[1:]:
        chain = chain.next(state)
    sfn.StateMachine(stack, "Flow", definition_body=sfn.DefinitionBody.from_chainable(chain))


def test_a_review_gate_with_nothing_to_merge_or_a_missing_output_is_refused(tmp_path: Path) -> None:
    from aws_cdk import Duration

    from infra.gate import BatonGate
    from infra.gate_checks import GateCheckError

    _, stack, baton = _stack(tmp_path)
    no_branch = {k: v for k, v in CONFIG.items() if k != "run_branch"}
    with pytest.raises(GateCheckError, match=r"^C100 UserFlow/Review: review gate with nothing to merge"):
        BatonGate.review(stack, "Review", baton=baton, config=no_branch, timeout=Duration.days(1))
    bad_url = {**CONFIG, "review_url": "https://p.example.com/{outputs.preview}", "outputs": {"other": "x"}}
    with pytest.raises(GateCheckError, match=r"^C101 UserFlow/Review2: review_url names 'outputs.preview'"):
        BatonGate.review(stack, "Review2", baton=baton, config=bad_url, timeout=Duration.days(1))
    good = {**bad_url, "outputs": {"preview": "pr-7"}}
    BatonGate.review(stack, "Review3", baton=baton, config=good, timeout=Duration.days(1))  # passes


def test_an_await_gate_without_a_positive_timeout_is_c241(tmp_path: Path) -> None:
    from aws_cdk import Duration

    from infra.gate import BatonGate
    from infra.gate_checks import GateCheckError

    _, stack, baton = _stack(tmp_path)
    with pytest.raises(GateCheckError, match=r"^C241 UserFlow/Sync: await gate without a positive timeout"):
        BatonGate.await_answers(stack, "Sync", baton=baton, gate="sync", timeout=Duration.seconds(0))


def test_an_await_gate_from_a_node_that_never_asks_fails_the_synth_with_c242(tmp_path: Path) -> None:
    from aws_cdk import Duration

    from infra.gate import BatonGate

    app, stack, baton = _stack(tmp_path)
    ask = BatonGate.ask(stack, "Approve", baton=baton, node="approve", prompt="Ship?", timeout=Duration.hours(1))
    sync = BatonGate.await_answers(
        stack, "Sync", baton=baton, gate="sync", from_node="aprove", timeout=Duration.minutes(5)
    )
    _machine(stack, ask, sync)
    with pytest.raises(Exception, match=r"C242 UserFlow/Sync: await gate waits on node 'aprove'") as err:
        app.synth()
    assert "nodes that ask: approve" in str(err.value) and "release at once with no answers" in str(err.value)


def test_a_good_await_gate_synthesizes_and_a_stack_where_no_gate_asks_is_not_judged(tmp_path: Path) -> None:
    from aws_cdk import App, Duration, Stack

    from infra.gate import BatonGate, BatonRef

    app, stack, baton = _stack(tmp_path)
    ask = BatonGate.ask(stack, "Approve", baton=baton, node="approve", prompt="Ship?", timeout=Duration.hours(1))
    sync = BatonGate.await_answers(
        stack, "Sync", baton=baton, gate="sync", from_node="approve", timeout=Duration.minutes(5)
    )
    _machine(stack, ask, sync)
    assert app.synth().get_stack_by_name("UserFlow").template  # no finding: it synthesizes
    # Questions that come from agents over the API: nothing in the stack asks, nothing to compare with.
    other = App(outdir=str(tmp_path / "other"))
    agents = Stack(other, "AgentsAsk")
    ref = BatonRef.from_exports(agents, "Baton", team="ci")
    only = BatonGate.await_answers(agents, "Sync", baton=ref, gate="s", from_node="draft", timeout=Duration.minutes(5))
    _machine(agents, only)
    assert other.synth().get_stack_by_name("AgentsAsk").template


def test_a_gate_inside_a_map_without_its_item_or_in_a_bounded_map_fails_the_synth_with_c243_and_c244(
    tmp_path: Path,
) -> None:
    from aws_cdk import Duration
    from aws_cdk import aws_stepfunctions as sfn

    from infra.gate import BatonGate

    app, stack, baton = _stack(tmp_path)
    sync = BatonGate.await_answers(stack, "Sync", baton=baton, gate="sync", timeout=Duration.minutes(5))
    _machine(stack, sfn.Map(stack, "Each", max_concurrency=2).item_processor(sync))
    with pytest.raises(Exception, match=r"C243 UserFlow/Flow/Each/items/Sync: an await gate inside Map") as err:
        app.synth()
    assert "C244 UserFlow/Flow/Each: MaxConcurrency 2 with a person's pause" in str(err.value)


def test_a_map_the_helpers_build_right_synthesizes(tmp_path: Path) -> None:
    from aws_cdk import Duration
    from aws_cdk import aws_stepfunctions as sfn

    from baton.workflows.gate_states import MAP_ITEM_PATH, map_item_selector
    from infra.gate import BatonGate

    app, stack, baton = _stack(tmp_path)
    sync = BatonGate.await_answers(
        stack, "Sync", baton=baton, gate="sync", timeout=Duration.minutes(5), map_item_path=MAP_ITEM_PATH
    )
    selector = {key: sfn.JsonPath.string_at(value) for key, value in _selector_paths(map_item_selector()).items()}
    _machine(stack, sfn.Map(stack, "Each", item_selector=selector).item_processor(sync))
    assert app.synth().get_stack_by_name("UserFlow").template


def _selector_paths(selector: dict[str, str]) -> dict[str, str]:
    """map_item_selector()'s ASL (`"key.$": path`) as CDK's item_selector keys and paths."""
    return {key.removesuffix(".$"): path for key, path in selector.items()}


def test_own_tasks_next_to_the_helpers_are_judged_at_synth_c240_and_c245(tmp_path: Path) -> None:
    from aws_cdk import Duration
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_stepfunctions as sfn
    from aws_cdk import aws_stepfunctions_tasks as tasks

    from infra.gate import BatonGate

    app, stack, baton = _stack(tmp_path)
    agent = lambda_.Function.from_function_arn(stack, "Agent", "arn:aws:lambda:eu-west-1:123456789012:function:agent")
    # Posts questions as 'approve', the node the ask gate below is a person's pause at (C240).
    draft = tasks.LambdaInvoke(
        stack, "Draft", lambda_function=agent, payload=sfn.TaskInput.from_object({"node": "approve"})
    )
    ask = BatonGate.ask(stack, "Approve", baton=baton, node="approve", prompt="Ship?", timeout=Duration.hours(1))
    # A pause of the user's own whose task times out with its declared timeout: no grace (C245).
    own = tasks.LambdaInvoke(
        stack,
        "OwnPause",
        lambda_function=agent,
        integration_pattern=sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
        payload=sfn.TaskInput.from_object({"token": sfn.JsonPath.task_token, "timeout_seconds": 600}),
        task_timeout=sfn.Timeout.duration(Duration.seconds(600)),
    )
    _machine(stack, draft, ask, own)
    with pytest.raises(Exception, match=r"C240 UserFlow/Flow/Draft: posts questions as node 'approve'") as err:
        app.synth()
    assert "C245 UserFlow/Flow/OwnPause: TimeoutSeconds 600 leaves no grace" in str(err.value)
    assert "at least 605" in str(err.value)
