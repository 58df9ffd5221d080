"""The merge project's buildspec, its build commands run for real with this interpreter as `python3`:
the repository reached by URL (a throwaway bare repository), Baton's table on a DynamoDB endpoint
(moto's server, AWS_ENDPOINT_URL). The build reports one way only, `python -m baton.merge.build`
writing its report into the table; it holds no task token and calls no Step Functions API."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from baton.domain.merge_contracts import BuildReport, BuildRequest
from baton.workflows.source_tree import source_tree
from tests.build_env import BuildTable, bare_origin, build_process_env, build_table, origin_head

pytestmark = pytest.mark.infra

BUILDSPEC = source_tree().root / "infra" / "buildspec" / "merge.yml"


@pytest.fixture
def table() -> Iterator[BuildTable]:
    with build_table() as built:
        yield built


def _script() -> tuple[dict[str, Any], str]:
    spec: Any = yaml.safe_load(BUILDSPEC.read_text())  # no CDK import needed here
    return spec, "\n".join(spec["phases"]["build"]["commands"])


def _run(tmp_path: Path, table: BuildTable, request: BuildRequest, **env: str) -> tuple[int, str, BuildReport | None]:
    spec, script = _script()
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    if not (stubs / "python3").exists():
        # A script, not a symlink: a link to .venv's python from outside .venv starts the base interpreter
        # without the venv's packages (it passed on 3.11 only where that one had pydantic installed).
        (stubs / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (stubs / "python3").chmod(0o755)
    full_env = {
        **build_process_env(tmp_path, table),
        **{k: str(v) for k, v in spec["env"]["variables"].items()},
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "CODEBUILD_SRC_DIR": str(source_tree().layer_dir),
        **request.environment(),
        **env,
    }
    full_env.pop("PYTHONPATH")  # the buildspec sets it from CODEBUILD_SRC_DIR
    proc = subprocess.run(["bash", "-c", script], env=full_env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr, table.records.get_report(request.run_id, request.gate, request.kind)


def _request(run_branch: str, url: str | None, kind: str = "merge") -> BuildRequest:
    return BuildRequest(run_id="r1", gate="ship", kind=kind, build_key="k1", run_branch=run_branch, repo_url=url)  # type: ignore[arg-type]


def test_merges_pushes_then_reports_into_the_table(tmp_path: Path, table: BuildTable) -> None:
    work, origin = bare_origin(tmp_path)
    code, err, report = _run(tmp_path, table, _request(work.run_branch, origin.as_uri()))
    assert code == 0, err
    assert report is not None and report.outcome is not None and report.build_key == "k1"
    assert report.outcome.merge_status == "merged" and report.outcome.merged_into == "main"
    # pushed before reporting: origin's main now holds the squash commit with the run's changes
    assert origin_head(origin, "main") == report.outcome.final_commit


def test_unknown_run_branch_reports_invalid_input(tmp_path: Path, table: BuildTable) -> None:
    _, origin = bare_origin(tmp_path)
    code, _, report = _run(tmp_path, table, _request("baton/nope", origin.as_uri()))
    assert code != 0
    assert report is not None and report.error == "MergeInvalidInput" and "baton/nope" in (report.cause or "")


def test_no_repository_configured_reports_invalid_input(tmp_path: Path, table: BuildTable) -> None:
    code, _, report = _run(tmp_path, table, _request("baton/run-1", None), BATON_REPO_URL="")
    assert code != 0
    assert report is not None and report.error == "MergeInvalidInput" and "no repository" in (report.cause or "")


def test_the_build_reports_only_through_the_one_python_path() -> None:
    """One reporting path and no token: no bash outcome handling, no Step Functions call, no token."""
    spec, script = _script()
    assert [line.strip() for line in script.splitlines() if line.strip()] == [
        'PYTHONPATH="$CODEBUILD_SRC_DIR/python" python3 -m baton.merge.build'
    ]
    text = BUILDSPEC.read_text()
    assert "stepfunctions" not in text and "send-task" not in text and "baton.merge.report" not in text
    assert "TASK_TOKEN" not in text and "TaskToken" not in text
    assert not any("TOKEN" in name and "GIT" not in name for name in spec["env"].get("variables", {}))
