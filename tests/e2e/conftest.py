"""End-to-end: the local stack started as `baton dev` in its own process, driven over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from baton.client.sdk import Client
from tests.conftest import wait_for

pytestmark = pytest.mark.e2e
__all__ = ["LocalStackProcess", "start_local_stack", "stop_local_stack", "wait_for"]


@dataclass
class LocalStackProcess:
    process: subprocess.Popen[str]
    state: dict[str, Any]
    state_dir: Path
    log_path: Path

    @property
    def api_url(self) -> str:
        return str(self.state["api_url"])

    @property
    def token(self) -> str:
        return str(self.state["token"])

    def client(self) -> Client:
        return Client(self.api_url, self.token)

    def http(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return httpx.Client(base_url=self.api_url, headers=headers, timeout=30)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_local_stack(state_dir: Path, *extra: str, env: dict[str, str] | None = None) -> LocalStackProcess:
    state_dir.mkdir(parents=True, exist_ok=True)
    log_path = state_dir / "dev.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "baton.cli.main",
            "dev",
            "--port",
            "0",
            "--no-demo",
            "--state-dir",
            str(state_dir),
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
    )
    state_file = state_dir / "local.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if state_file.exists():
            return LocalStackProcess(process, json.loads(state_file.read_text()), state_dir, log_path)
        if process.poll() is not None:
            raise RuntimeError(f"baton dev exited early:\n{log_path.read_text()}")
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"baton dev did not start in 60 s:\n{log_path.read_text()}")


def stop_local_stack(stack: LocalStackProcess) -> int:
    stack.process.send_signal(signal.SIGINT)
    try:
        return stack.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        stack.process.kill()
        raise


@pytest.fixture(scope="session")
def local_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    stack = start_local_stack(tmp_path_factory.mktemp("baton-dev"))
    yield stack
    stop_local_stack(stack)
