"""The local stack's mail sender: each mail is printed on the console and kept as one JSON file in the
outbox directory (`BATON_EMAIL_OUTBOX`; `baton dev` uses `<state dir>/outbox`), where tests read it."""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from typing import TYPE_CHECKING

from baton.channels.email.mail import ANSWER_LINK_HEADING, Mail
from baton.private_files import private_dir, write_private

if TYPE_CHECKING:
    from pathlib import Path

_counter = itertools.count(1)
_lock = threading.Lock()


class OutboxMailSender:
    def __init__(self, directory: Path, *, echo: bool = True) -> None:
        self.directory = directory
        self.echo = echo

    def send(self, mail: Mail) -> str:
        with _lock:
            message_id = f"{time.time_ns()}-{os.getpid()}-{next(_counter)}"
        target = private_dir(self.directory) / f"{message_id}.json"
        # 0600, whole or not at all: a mail's signed links answer for whoever holds them
        write_private(target, json.dumps({"id": message_id, "to": mail.to, "subject": mail.subject, "text": mail.text}))
        if self.echo:
            # A mail a person can answer from is printed whole (its link is what they open); the rest (a
            # run's end, a reminder) is one line, so the stack's terminal stays readable (issue 16 item 1).
            body = f"\n{mail.text}" if ANSWER_LINK_HEADING in mail.text else f" (kept in {target})"
            print(f"[baton] mail to {mail.to}: {mail.subject}{body}", flush=True)
        return message_id


def read_outbox(directory: Path) -> list[Mail]:
    """The mails in `directory`, oldest first."""
    if not directory.is_dir():
        return []
    found = sorted(directory.glob("*.json"), key=lambda p: tuple(int(x) for x in p.stem.split("-")))
    mails = []
    for path in found:
        data = json.loads(path.read_text())
        mails.append(Mail(to=data["to"], subject=data["subject"], text=data["text"]))
    return mails
