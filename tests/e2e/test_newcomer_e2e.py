"""Issue 16, end to end: the README walkthrough against `baton dev` in its own process, every step
taken from what the stack and the CLI print (the banner, the notifications, `workflow inspect`,
`review show`) and run as printed, in a shell, in an 80-column terminal. Then `make dev | tee` and
Ctrl-C, and a CLI call after the stack is gone."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baton.workflows.source_tree import source_tree
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for

pytestmark = pytest.mark.e2e

ROOT = source_tree().root
WIDTH = 80
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "newcomer",
    "GIT_AUTHOR_EMAIL": "newcomer@example.com",
    "GIT_COMMITTER_NAME": "newcomer",
    "GIT_COMMITTER_EMAIL": "newcomer@example.com",
}


def _shell(stack: LocalStackProcess | None, command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """A printed command line, run as printed by a shell where `baton dev` runs (an 80-column terminal)."""
    env = {**os.environ, "COLUMNS": str(WIDTH), **GIT_IDENTITY}
    if stack is not None:
        env.update({"BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token})
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _ok(stack: LocalStackProcess, command: str) -> str:
    result = _shell(stack, command)
    assert result.returncode == 0, f"{command}\n{result.stdout}{result.stderr}"
    return result.stdout


def _printed_line(text: str, pattern: str) -> str:
    found = re.search(pattern, text, re.MULTILINE)
    assert found is not None, f"no line matching {pattern!r} in:\n{text}"
    return found.group(1).strip()


def _narrow(output: str) -> None:
    too_wide = [line for line in output.splitlines() if len(line) > WIDTH and " " in line.strip()]
    assert not too_wide, too_wide


def test_the_walkthrough_runs_as_printed(tmp_path: Path) -> None:
    stack = start_local_stack(tmp_path / "dev", "--demo")
    try:
        wait_for(lambda: "runs events" in stack.log(), timeout=60)
        banner = stack.log()
        run_id = banner.split("demo: run ", 1)[1].split()[0]
        questions_command = _printed_line(banner, rf"^  1\. (.+ runs questions {run_id})$")
        cli = questions_command.removesuffix(f" runs questions {run_id}")  # the prefix every hint uses

        # 1-2. The questions, ids whole at 80 columns; each answered with the notification's own command.
        pending = wait_for(lambda: len(q := stack.client().pending_questions(run_id)) == 2 and q)
        listed = _ok(stack, questions_command)
        _narrow(listed)
        for question in pending:
            assert any(question.interaction_id in line for line in listed.splitlines()), listed
        db, name = sorted(pending, key=lambda q: "database" not in q.request.prompt)
        log = stack.log()
        answer_db = _printed_line(log, rf'^  CLI: (.+ runs answer {run_id} {db.interaction_id} "<answer>")$')
        answer_name = _printed_line(log, rf'^  CLI: (.+ runs answer {run_id} {name.interaction_id} "<answer>")$')
        assert answer_db.startswith(f"{cli} runs answer")
        _ok(stack, answer_db.replace('"<answer>"', "postgres"))

        # 5. Answering twice says who answered what and when, in words.
        again = _shell(stack, answer_db.replace('"<answer>"', "dynamodb"))
        assert again.returncode == 1
        assert re.search(r'it was answered by local-operator with "postgres" at 20\d\d-', again.stderr), again.stderr
        assert "interaction:" not in again.stderr
        _ok(stack, answer_name.replace('"<answer>"', "'first light'"))

        # 3. The interrupt: `workflow inspect` prints the resume command; run it with a value.
        wait_for(lambda: stack.client().list_interrupts(status="pending", session_id=run_id), timeout=60)
        shown = _ok(stack, f"{cli} workflow inspect {run_id}")
        resume = _printed_line(shown, r"^    Resume with:\n\s+(.+)$")
        assert resume.startswith(f"{cli} workflow resume-interrupt {run_id}")
        _ok(stack, resume.replace("'<json>'", "'\"staging\"'"))

        # 4 + 6. The review: the notification lists the accepted actions; `review show` labels its
        # messages, prints the verdict once and an action that runs as printed.
        wait_for(lambda: "(review)" in stack.log(), timeout=90)
        review_hint = _printed_line(stack.log(), r"^  CLI: (.+ review show .+)$")
        assert "__review_action=<approve_merge|force_merge|request_changes|reply>" in review_hint
        assert review_hint.startswith(f"{cli} review show {run_id}, then {cli} resume --run-id {run_id}")
        review = _ok(stack, f"{cli} review show {run_id}")
        assert "message 1 of 1 · companion" in review and "companion turns used: 1 of" in review
        assert review.lower().count("verdict:") == 1, review
        approve = _printed_line(review, r"— e\.g\. (.+)$")
        assert approve.startswith(f"{cli} resume --run-id {run_id} --answer __review_action=approve_merge")
        _ok(stack, approve)

        # 7. Following the run ends with it, its status as the exit code (0: succeeded).
        follow = _printed_line(banner, rf"· (.+ runs events {run_id} --follow)$")
        followed = _shell(stack, follow)
        assert followed.returncode == 0, followed.stdout + followed.stderr
        assert "run_succeeded" in followed.stdout
        wait_for(lambda: f"[baton] run {run_id} (demo) succeeded" in stack.log(), timeout=30)

        # 9 + 1 + 7. The plain pause of docs/local-stack.md: listed by `runs questions` with a command that answers
        # it; left to time out, it is one line in terminal 1 and `--follow` exits 1 (failed).
        pause_input = json.dumps({"prompt": "Deploy?", "timeout_seconds": 15})
        paused_id = json.loads(_ok(stack, f"{cli} runs start human_pause --input '{pause_input}' --json"))["run_id"]
        listed = wait_for(lambda: "blocking ask" in (out := _ok(stack, f"{cli} runs questions {paused_id}")) and out)
        assert f"answer: CLI: {cli} resume --run-id {paused_id} --answer key=value" in listed
        timed_out = _shell(stack, f"{cli} runs events {paused_id} --follow")
        assert timed_out.returncode == 1, timed_out.stdout + timed_out.stderr
        line = rf"^\[baton\] run {paused_id} \(human_pause\) failed: HumanInputTimedOut — timed out after 15s"
        wait_for(lambda: re.search(line, stack.log(), re.MULTILINE), timeout=30)

        # 9. The review_gate example of docs/local-stack.md, as written there (its repository made first).
        doc = (ROOT / "docs" / "local-stack.md").read_text()
        setup = _printed_line(doc, r"^(\(git init -q -b main /tmp/baton-try-review .+)$")
        start = _printed_line(doc, r"^uv run baton (runs start review_gate --input .+)$")
        repo_dir = tmp_path / "try-review"
        made = _shell(None, setup.replace("/tmp/baton-try-review", str(repo_dir)))
        assert made.returncode == 0, made.stderr
        started = _ok(stack, f"{cli} {start.replace('/tmp/baton-try-review', str(repo_dir))} --json")
        review_run = json.loads(started)["run_id"]
        wait_for(lambda: _shell(stack, f"{cli} review show {review_run}").returncode == 0, timeout=90)

        # 8. A long-poll whose client goes away prints no traceback.
        _abandon_long_poll(stack, paused_id)
    finally:
        code = stop_local_stack(stack)
    log = stack.log()
    assert code == 0
    assert "FailureEventException" not in log and "StateFail" not in log, log  # the emulator's parse trees
    assert "Traceback" not in log and "BrokenPipeError" not in log, log


def _abandon_long_poll(stack: LocalStackProcess, session: str) -> None:
    created = stack.client().request(
        "POST", "/api/v1/interrupts", json_body={"sessionId": session, "prompt": "x", "schema": {"type": "string"}}
    )
    host, port = stack.api_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # close = RST
    request = f"GET /api/v1/interrupts/{created['id']}?waitSeconds=2 HTTP/1.1\r\nHost: {host}:{port}\r\n"
    sock.sendall(f"{request}Authorization: Bearer {stack.token}\r\n\r\n".encode())
    time.sleep(0.5)
    sock.close()
    time.sleep(3)  # the server answers when the 2 s hold ends, to a client that is gone


def test_make_dev_under_tee_stops_cleanly_and_a_gone_stack_is_named(tmp_path: Path) -> None:
    state_dir = tmp_path / ".baton"  # where the CLI run from tmp_path looks
    output = tmp_path / "make.log"
    dev_args = f"--port 0 --no-demo --state-dir {state_dir}"
    # Its own session, so the signal reaches make, its shell, baton dev and tee, as Ctrl-C does.
    shell = subprocess.Popen(
        ["bash", "-c", f"make --no-print-directory -o bootstrap dev DEV_ARGS='{dev_args}' 2>&1 | tee {output}"],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    state_file = state_dir / "local.json"
    try:
        # `-o bootstrap`: the environment is already set up (the suite runs in it); the dev recipe is tested.
        wait_for(lambda: state_file.exists(), timeout=120)
        pid = json.loads(state_file.read_text())["pid"]
        wait_for(lambda: "Ctrl-C stops" in output.read_text(), timeout=30)
        os.killpg(shell.pid, signal.SIGINT)
        printed, _ = shell.communicate(timeout=60)
    finally:
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGKILL)
    wait_for(lambda: not _alive(pid), timeout=30)
    assert not state_file.exists(), "local.json left behind"
    assert "Interrupt" not in printed and "Traceback" not in printed, printed
    assert (state_dir / "local-data.json").exists()  # the data was saved on the way out

    # A local.json whose stack is gone (a kill -9, a crash) is named, with how to start one.
    state_file.write_text(json.dumps({"api_url": "http://127.0.0.1:9", "token": "t", "pid": pid}))
    env = {k: v for k, v in os.environ.items() if k not in ("BATON_API_URL", "BATON_TOKEN")}
    result = subprocess.run(
        [sys.executable, "-m", "baton.cli", "runs", "show", "r1"],
        cwd=tmp_path,
        env={**env, "COLUMNS": str(WIDTH)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert f"the local stack is not running (pid {pid} gone): start it with `make dev`" in result.stderr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
