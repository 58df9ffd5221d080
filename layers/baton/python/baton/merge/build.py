"""`python -m baton.merge.build`: the review gate's build, one Python path locally and deployed.

Its environment is a `BuildRequest` (`BATON_BUILD_KIND=diff|merge`, `BATON_RUN_ID`, `BATON_GATE`,
`BATON_BUILD_KEY`, `BATON_RUN_BRANCH`, `BATON_REPO_URL` or `BATON_REPO_PATH`, ...; the names are in
`baton/domain/merge_contracts.py`). With a URL (the CodeBuild project, infra/buildspec/merge.yml) it
clones the repository into a temporary directory (CodeCommit through the aws credential helper, others
with `BATON_GIT_TOKEN` when set), fetches the run branch and checks out the target; with a path (the
local stack's subprocess, `baton/adapters/merge_runners.py`) it works in that checkout. Then:

* `diff`: the run branch's bounded diff (`baton/merge/diff.py`), the one the review companion and
  `GET /api/runs/{run_id}/review` show;
* `merge`: `baton/merge/squash.py`'s merge of the reviewed commit (`BATON_REVIEWED_HEAD`, pinned by the
  approval; never the run branch's tip at build time), pushed to the target when the repository was cloned.

Whatever happens, it writes ONE `BuildReport` into Baton's table (`BATON_TABLE_NAME`): the outcome, the
diff, or `MergeInvalidInput` / `MergeCrashed` with a cause (capped once, by `BuildReport`). It holds no
task token: when the build ends, Baton's `build_finished` function sends the token it parked.

Exit status: 0 merged, noop or a diff; 1 rejected; 2 bad input; 3 crash; 4 the report was not written.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from baton.domain.merge_contracts import ERROR_CRASHED, ERROR_INVALID_INPUT, BuildReport, BuildRequest
from baton.errors import BatonError, ValidationFailedError
from baton.merge.diff import run_branch_diff
from baton.merge.gitcmd import GitCommandError, run_git
from baton.merge.squash import merge_run_branch

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from baton.review_ports import BuildReportWriter

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_BAD_INPUT = 2
EXIT_CRASHED = 3
EXIT_REPORT_FAILED = 4
GIT_TOKEN_ENV = "BATON_GIT_TOKEN"
_HOST = re.compile(r"^https://([^/@]+)/")


class _PushFailedError(RuntimeError):
    pass


def credential_options(url: str, token: str | None, workdir: Path) -> list[str]:
    """`git -c` options that authenticate to `url`: CodeCommit's helper, or a store file with the token."""
    if url.startswith("https://git-codecommit."):
        return ["-c", "credential.helper=!aws codecommit credential-helper $@", "-c", "credential.UseHttpPath=true"]
    host = _HOST.match(url)
    if token and host:
        store = workdir / "credentials"
        store.touch(mode=0o600)
        store.write_text(f"https://x-access-token:{token}@{host.group(1)}\n")
        return ["-c", f"credential.helper=store --file={store}"]
    return []


@contextlib.contextmanager
def checkout(request: BuildRequest, environ: Mapping[str, str]) -> Iterator[tuple[Path, list[str]]]:
    """The repository to work in and the git options to push with: the local path, or a fresh clone."""
    if not request.repo_url:
        if not request.repo_path:
            raise ValidationFailedError("no repository: the build needs BATON_REPO_URL or BATON_REPO_PATH")
        yield Path(request.repo_path), []
        return
    with tempfile.TemporaryDirectory(prefix="baton-build-") as tmp:
        work = Path(tmp)
        auth = credential_options(request.repo_url, environ.get(GIT_TOKEN_ENV), work)
        repo = work / "repo"
        run_git(work, *auth, "clone", "--quiet", "--no-tags", request.repo_url, str(repo))
        branch = request.run_branch
        try:
            run_git(repo, *auth, "fetch", "--quiet", "origin", f"+refs/heads/{branch}:refs/heads/{branch}")
        except GitCommandError as err:
            raise ValidationFailedError(f"run branch {branch}: {err.stderr.strip()}") from err
        target = request.diff_target if request.kind == "diff" else request.into
        if target not in ("HEAD", "current", "none", ""):
            try:
                run_git(repo, "checkout", "--quiet", target)
            except GitCommandError as err:
                raise ValidationFailedError(f"target branch {target}: {err.stderr.strip()}") from err
        yield repo, auth


def run_build(request: BuildRequest, environ: Mapping[str, str]) -> BuildReport:
    """Do the build and say what happened; never raises."""
    base = {"run_id": request.run_id, "gate": request.gate, "kind": request.kind, "build_key": request.build_key}
    try:
        with checkout(request, environ) as (repo, auth):
            if request.kind == "diff":
                diff = run_branch_diff(repo, request.run_branch, request.diff_target, max_bytes=request.max_bytes)
                return BuildReport(**base, diff=diff)
            into = "current" if request.into == "" else request.into
            outcome = merge_run_branch(
                repo,
                request.run_branch,
                into=into,
                strategy=request.strategy,
                message=request.message,
                reviewed_head=request.reviewed_head,
            )
            if request.repo_url and outcome.merge_status == "merged" and outcome.merged_into:
                try:
                    run_git(repo, *auth, "push", "--quiet", "origin", f"HEAD:refs/heads/{outcome.merged_into}")
                except GitCommandError as err:
                    raise _PushFailedError(f"git push to {outcome.merged_into} failed: {err.stderr.strip()}") from err
            return BuildReport(**base, outcome=outcome)
    except BatonError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return BuildReport(**base, error=ERROR_INVALID_INPUT, cause=exc.message)
    except Exception as exc:
        detail = traceback.format_exc()
        print(detail, file=sys.stderr, end="")
        summary = f"git failed: {exc}" if isinstance(exc, GitCommandError) else f"{type(exc).__name__}: {exc}"
        return BuildReport(**base, error=ERROR_CRASHED, cause=f"{summary}\n\n{detail}")


def exit_status(report: BuildReport) -> int:
    if report.error == ERROR_INVALID_INPUT:
        return EXIT_BAD_INPUT
    if report.error is not None:
        return EXIT_CRASHED
    if report.outcome is not None and report.outcome.merge_status == "rejected":
        return EXIT_REJECTED
    return EXIT_OK


def default_writer(environ: Mapping[str, str]) -> BuildReportWriter:
    """Baton's table from the environment (imported late: the module loads without an AWS SDK)."""
    from baton.adapters.build_records import DynamoBuildRecords
    from baton.adapters.clients import dynamodb_client

    table = environ.get("BATON_TABLE_NAME", "")
    if not table:
        raise ValidationFailedError("BATON_TABLE_NAME is not set: the build has nowhere to report")
    return DynamoBuildRecords(table, dynamodb_client())


def _summary(report: BuildReport) -> str:
    if report.outcome is not None:
        return json.dumps(report.outcome.model_dump(mode="json"), indent=2)
    if report.diff is not None:
        return json.dumps(report.diff.model_dump(mode="json", exclude={"text"}), indent=2)
    return f"{report.error}: {(report.cause or '').splitlines()[0] if report.cause else ''}"


def main(environ: Mapping[str, str] | None = None, *, writer: BuildReportWriter | None = None) -> int:
    """Entry point; `writer` replaces the table (tests)."""
    env = os.environ if environ is None else environ
    try:
        request = BuildRequest.from_environment(env)
    except ValidationError as exc:
        print(f"error: the build's environment is not a build request: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT  # no run to report to
    report = run_build(request, env)
    print(_summary(report))
    try:
        (writer or default_writer(env)).put_report(report)
    except Exception as exc:
        print(f"error: could not write the {request.kind} report to Baton's table: {exc}", file=sys.stderr)
        return EXIT_REPORT_FAILED
    return exit_status(report)


if __name__ == "__main__":
    raise SystemExit(main())
