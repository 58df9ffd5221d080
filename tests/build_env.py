"""What the review gate's build needs around it in a test, the way CodeBuild gives it: a DynamoDB
endpoint (moto's server on localhost, reached by a subprocess through AWS_ENDPOINT_URL) holding
Baton's table, and a repository reached by URL (a throwaway bare repository, `file://`)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from baton.adapters.build_records import DynamoBuildRecords
from baton.cli.demo_repo import DemoRepo, create_demo_repo
from baton.workflows.source_tree import source_tree
from baton.workflows.table import create_table_kwargs
from tests.gitrepo import git

REGION = "us-east-1"


@dataclass
class BuildTable:
    url: str
    table_name: str
    records: DynamoBuildRecords

    def environment(self) -> dict[str, str]:
        """The AWS part of the build's environment (the project sets BATON_TABLE_NAME)."""
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "BATON_TABLE_NAME": self.table_name,
        }


@contextmanager
def build_table() -> Iterator[BuildTable]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        client: Any = boto3.session.Session().client(
            "dynamodb",
            endpoint_url=url,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        table = f"baton-build-{uuid.uuid4().hex[:8]}"  # moto's backends are shared by every server here
        client.create_table(**create_table_kwargs(table))
        yield BuildTable(url, table, DynamoBuildRecords(table, client))
    finally:
        server.stop()


def bare_origin(tmp_path: Path) -> tuple[DemoRepo, Path]:
    """The demo repository (main + a run branch) and a bare clone of it: the team repository by URL."""
    work = create_demo_repo(tmp_path / "work")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work.path), str(origin)], check=True, capture_output=True)
    return work, origin


def origin_head(origin: Path, branch: str) -> str:
    return git(origin, "rev-parse", branch)


def build_process_env(tmp_path: Path, table: BuildTable, **env: str) -> dict[str, str]:
    """A clean environment like CodeBuild's: no git identity, no inherited GIT_*, the baton package on the path."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "BATON_", "AWS_"))}
    return {
        **base,
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PYTHONPATH": str(source_tree().layer_dir / "python"),
        **table.environment(),
        **env,
    }


def run_build_process(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m baton.merge.build`, as the buildspec and the local stack run it."""
    return subprocess.run(
        [sys.executable, "-m", "baton.merge.build"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
