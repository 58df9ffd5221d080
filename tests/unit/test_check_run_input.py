"""Item 6 of issue 10 (first part): POST /api/runs checks the run's input against the schema its workflow
declares beside its ASL file, and a review gate's configuration as the gate would, before any execution
starts: a 422 naming the field, and nothing changes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.domain.review_gate import parse_gate_config
from baton.errors import ValidationFailedError
from baton.runtime.settings import Settings
from baton.runtime.wiring import input_schemas
from baton.services.runs import RunService
from baton.workflows.input_schema import compact, load_schemas
from baton.workflows.resources import STATE_MACHINES, WORKFLOW_DEFAULTS
from baton.workflows.source_tree import source_tree

if TYPE_CHECKING:
    from baton.services.core import Core

GOOD_REVIEW = {"run_branch": "baton/run-1", "repo_path": "/tmp/repo"}


def _runs(core: Core, *, runner: str = "local", repository: str = "") -> RunService:
    core.workflow_arns.update(
        {name: f"arn:aws:states:us-east-1:123456789012:stateMachine:baton-{name}" for name in STATE_MACHINES}
    )
    return RunService(
        core,
        input_defaults=WORKFLOW_DEFAULTS,
        input_schemas=load_schemas(),
        check_review=lambda raw: parse_gate_config(raw, merge_runner=runner, merge_repository=repository),
    )


def _refused(runs: RunService, workflow: str, payload: dict[str, Any]) -> ValidationFailedError:
    with pytest.raises(ValidationFailedError) as refused:
        runs.start(workflow, payload, run_id="r1", caller="op")
    assert runs.core.store.get_run("r1") is None  # nothing recorded
    assert runs.core.workflows.started == []  # type: ignore[attr-defined]  # nothing started, nothing asked
    return refused.value


def test_every_workflow_declares_an_input_schema_beside_its_asl_file() -> None:
    directory = source_tree().statemachines_dir
    runnable = {wf: asl for wf, asl in STATE_MACHINES.items() if wf != TIMER_STATE_MACHINE}  # a timer is no run
    for asl in runnable.values():
        path = directory / asl.replace(".asl.json", ".input.schema.json")
        assert path.is_file(), path
        assert json.loads(path.read_text())["type"] == "object"
    assert set(load_schemas()) == set(runnable)


def test_the_demo_without_its_review_config_is_a_422_naming_the_field(core: Core) -> None:
    err = _refused(_runs(core), "demo", {})
    assert err.http_status == 422 and err.details["path"] == "input.review"
    assert "input.review is required" in err.message


def test_a_review_gate_with_no_repository_is_a_422_naming_the_field(core: Core) -> None:
    runs = _runs(core)
    err = _refused(runs, "review_gate", {})
    assert err.details["path"] == "input.run_branch"
    err = _refused(runs, "demo", {"review": {"run_branch": "baton/run-1"}})  # locally a repo_path is needed
    assert err.details["path"] == "input.review.repo_path" and "no repository to merge" in err.message
    deployed = _runs(core, runner="codebuild", repository="")
    err = _refused(deployed, "review_gate", {"run_branch": "baton/run-1"})
    assert err.details["path"] == "input.repo_url" and "-c repository=" in err.message


def test_a_typo_in_the_review_config_is_refused_at_creation(core: Core) -> None:
    err = _refused(_runs(core), "demo", {"review": {**GOOD_REVIEW, "merge_stratgy": "squash"}})
    assert err.details["path"] == "input.review" and "merge_stratgy" in err.message


def test_wrong_types_are_named(core: Core) -> None:
    runs = _runs(core)
    assert _refused(runs, "human_pause", {"prompt": 5}).details["path"] == "input.prompt"
    err = _refused(runs, "demo", {"review": GOOD_REVIEW, "questions": [{"options": ["a"]}]})
    assert err.details["path"] == "input.questions[0].question"


def test_good_inputs_start(core: Core) -> None:
    runs = _runs(core)
    assert runs.start("demo", {"review": GOOD_REVIEW}, run_id="d1", caller="op").status == "running"
    assert runs.start("review_gate", GOOD_REVIEW, run_id="g1", caller="op").status == "running"
    assert runs.start("human_pause", {"prompt": "Ship?"}, run_id="h1", caller="op").status == "running"
    deployed = _runs(core, runner="codebuild", repository="https://example.com/repo.git")
    assert deployed.start("review_gate", {"run_branch": "b"}, run_id="g2", caller="op").status == "running"


def test_deployed_schemas_come_from_the_environment_and_fit_it() -> None:
    text = compact(load_schemas())
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_INPUT_SCHEMAS": text})
    assert input_schemas(settings) == {
        name: {k: v for k, v in s.items() if k != "$comment"} for name, s in load_schemas().items()
    }
    assert len(text) < 2500  # Lambda's 4 KB for all of a function's environment; the rest is small
