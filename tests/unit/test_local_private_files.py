"""What `baton dev` writes under its state dir holds credentials (the bearer token, task tokens, signed
answer links): every file is 0600 and every folder 0700, whatever the umask (issue 29 item 7). The stack
itself, started in a state dir made looser before: tests/e2e/test_local_startup.py."""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING

import pytest

from baton.channels.email.mail import Mail
from baton.channels.email.outbox import OutboxMailSender, read_outbox
from baton.local import persist
from baton.local.persist import Journal, line
from baton.local.stack import OUTBOX_DIR, STATE_FILE
from baton.private_files import tighten, write_private
from tests.local_state import loose_modes

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ITEM = {"PK": {"S": "RUN#a"}, "SK": {"S": "RUN"}, "task_token": {"S": "AQCE-secret"}}
MAIL = Mail(to="you@localhost", subject="A question", text="Answer: http://127.0.0.1/answer?sig=secret")


@pytest.fixture(params=[0o022, 0o002, 0o000])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The usual umask and two looser ones: the modes must come from Baton, not from the umask."""
    before = os.umask(request.param)
    yield request.param
    os.umask(before)


def test_every_file_the_local_stack_writes_is_yours_only(tmp_path: Path, umask: int) -> None:
    state = tmp_path / ".baton"
    OutboxMailSender(state / OUTBOX_DIR, echo=False).send(MAIL)
    persist.save(state / persist.DATA_FILE, "bearer-token", [json.dumps(ITEM)])
    journal = persist.journal_of(state / persist.DATA_FILE)
    journal.open()
    journal.append(line([json.dumps(ITEM)], []))
    journal.rotate()  # the journal moved aside (.old) and a new one
    journal.append(line([json.dumps(ITEM)], []))
    journal.close()
    write_private(state / STATE_FILE, json.dumps({"token": "bearer-token"}))
    assert sorted(p.name for p in state.rglob("*")) == sorted(
        [OUTBOX_DIR, persist.DATA_FILE, persist.JOURNAL_FILE, f"{persist.JOURNAL_FILE}.old", STATE_FILE]
        + [p.name for p in (state / OUTBOX_DIR).iterdir()]
    )
    assert len(list((state / OUTBOX_DIR).iterdir())) == 1  # the mail, no temporary left
    assert read_outbox(state / OUTBOX_DIR) == [MAIL]
    assert loose_modes(state) == []


def test_a_journal_in_a_new_folder_makes_the_folder_yours_only(tmp_path: Path, umask: int) -> None:
    journal = Journal(tmp_path / "state" / persist.JOURNAL_FILE)
    journal.open()
    journal.close()
    assert loose_modes(tmp_path / "state") == []


def test_folders_and_files_made_looser_before_are_tightened(tmp_path: Path) -> None:
    outbox = tmp_path / ".baton" / OUTBOX_DIR
    outbox.mkdir(parents=True, mode=0o755)
    (tmp_path / ".baton").chmod(0o755)
    (outbox / "1-2-3.json").write_text("{}")
    (outbox / "1-2-3.json").chmod(0o644)  # as an older Baton wrote its mails
    (tmp_path / ".baton" / STATE_FILE).write_text("{}")
    (tmp_path / ".baton" / STATE_FILE).chmod(0o664)
    for folder in (tmp_path / ".baton", outbox, tmp_path / "none"):
        tighten(folder)
    assert not (tmp_path / "none").exists()
    assert loose_modes(tmp_path / ".baton") == []


def test_a_temporary_file_a_crash_left_is_replaced_not_written_into(tmp_path: Path) -> None:
    target = tmp_path / STATE_FILE
    stale = tmp_path / f".{STATE_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"  # this thread's own name
    stale.write_text("stale")
    stale.chmod(0o644)  # opened without O_EXCL, it would keep this mode
    write_private(target, "written")
    assert target.read_text() == "written"
    assert [p.name for p in tmp_path.iterdir()] == [STATE_FILE]
    assert loose_modes(tmp_path) == []
