"""`make fuzz`: the full Schemathesis run against a fresh local stack (every phase, every check).

Starts `baton dev` in its own process with a throw-away state directory, runs the CLI against the
served OpenAPI, stops the stack and exits with the CLI's status. FUZZ_MAX_EXAMPLES sets the examples
per operation (300 by default: thousands of requests in all)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    state_dir = Path(tempfile.mkdtemp(prefix="baton-fuzz-"))
    log = (state_dir / "dev.log").open("w")
    stack = subprocess.Popen(
        [sys.executable, "-m", "baton.cli.main", "dev", "--port", "0", "--no-demo", "--state-dir", str(state_dir)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        state_file = state_dir / "local.json"
        deadline = time.monotonic() + 90
        while not state_file.exists():
            if stack.poll() is not None or time.monotonic() > deadline:
                print((state_dir / "dev.log").read_text(), file=sys.stderr)
                return 1
            time.sleep(0.2)
        state = json.loads(state_file.read_text())
        command = [
            str(Path(sys.executable).with_name("schemathesis")),
            "--config-file",
            str(Path(__file__).parent.parent / "tests" / "e2e" / "schemathesis.toml"),
            "run",
            f"{state['api_url']}/api/openapi.json",
            "-H",
            f"Authorization: Bearer {state['token']}",
            "--max-examples",
            os.environ.get("FUZZ_MAX_EXAMPLES", "300"),
            "--request-timeout",
            "30",
        ]
        return subprocess.call(command)
    finally:
        stack.send_signal(signal.SIGINT)
        try:
            stack.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stack.kill()


if __name__ == "__main__":
    sys.exit(main())
