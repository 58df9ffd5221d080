"""In-memory `AnswerLinkStore` (`baton/ports.py`) with the DynamoDB adapter's conditions
(`baton/adapters/answer_links.py`): a link is claimed once; a stale, uncompleted claim may be taken over."""

from __future__ import annotations

import threading

from baton.channels.email.links import LinkUse


class MemoryAnswerLinks:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.uses: dict[tuple[str, str], LinkUse] = {}

    def claim_link(self, use: LinkUse, *, stale_before: str) -> LinkUse | None:
        key = (use.run_id, use.link_id)
        with self._lock:
            current = self.uses.get(key)
            if current is not None and not (current.state == "claimed" and current.at < stale_before):
                return current
            self.uses[key] = use
            return None

    def complete_link(self, use: LinkUse) -> None:
        key = (use.run_id, use.link_id)
        with self._lock:
            current = self.uses.get(key)
            if current is not None and current.state == "claimed" and current.at == use.at:
                self.uses[key] = use  # only this request's own claim (the adapter's condition)

    def release_link(self, use: LinkUse) -> None:
        key = (use.run_id, use.link_id)
        with self._lock:
            current = self.uses.get(key)
            if current is not None and current.state == "claimed" and current.at == use.at:
                del self.uses[key]

    def get_link(self, run_id: str, link_id: str) -> LinkUse | None:
        return self.uses.get((run_id, link_id))


class MemoryMailMarks:
    """In-memory `MailLedger` (`baton/channels/email/mail.py`): a recipient's mark, once sent."""

    def __init__(self) -> None:
        self.marks: set[object] = set()

    def was_mailed(self, mark: object) -> bool:
        return mark in self.marks

    def record_mailed(self, mark: object) -> None:
        self.marks.add(mark)
