"""The local stack's journal (baton.local.persist): restart = snapshot + journal replay, a torn last line
ignored and said so, an interrupted compaction losing nothing."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import pytest

from baton.local import persist
from baton.local.persist import line

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


def _item(pk: str, sk: str, **extra: str) -> dict[str, Any]:
    return {"PK": {"S": pk}, "SK": {"S": sk}, **{k: {"S": v} for k, v in extra.items()}}


def _key(item: dict[str, Any]) -> dict[str, Any]:
    return {"PK": item["PK"], "SK": item["SK"]}


def _line(puts: Sequence[dict[str, Any]] = (), deletes: Sequence[dict[str, Any]] = ()) -> bytes:
    return line([json.dumps(p) for p in puts], [json.dumps(_key(d)) for d in deletes])


def _loaded(path: Path) -> dict[str, dict[str, Any]]:
    saved = persist.load(path)
    assert saved is not None
    return {f"{i['PK']['S']}|{i['SK']['S']}": i for i in saved.items}


RUN = _item("RUN#a", "RUN", status="running")
ASKED = _item("RUN#a", "INT#1", status="pending")
ANSWERED = _item("RUN#a", "INT#1", status="answered")
MARKER = _item("RUN#a", "PEND#1", status="pending")


def test_restart_is_the_snapshot_then_the_journal_in_order(tmp_path: Path) -> None:
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok", [json.dumps(RUN)])
    journal = persist.journal_of(path)
    journal.open(truncate=True)
    journal.append(_line([ASKED, MARKER]))  # one request: the question and its marker
    journal.append(_line([ANSWERED], [MARKER]))  # the answer: the item replaced, the marker deleted
    journal.close()
    assert _loaded(path) == {"RUN#a|RUN": RUN, "RUN#a|INT#1": ANSWERED}


def test_a_torn_last_line_is_ignored_and_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok", [json.dumps(RUN)])
    journal = persist.journal_of(path)
    journal.open(truncate=True)
    journal.append(_line([ASKED, MARKER]))
    torn = _line([ANSWERED], [MARKER])
    journal.append(torn[: len(torn) // 2])  # the process died mid-write: that request got no response
    journal.close()
    with caplog.at_level(logging.WARNING, logger="baton"):
        loaded = _loaded(path)
    assert loaded == {"RUN#a|RUN": RUN, "RUN#a|INT#1": ASKED, "RUN#a|PEND#1": MARKER}  # nothing of it applied
    assert "cut short by a crash" in caplog.text


def test_an_unreadable_line_before_the_last_stops_the_replay_there(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok", [json.dumps(RUN)])
    journal = persist.journal_of(path)
    journal.open(truncate=True)
    journal.append(_line([ASKED]))
    journal.append(b"not json\n")
    journal.append(_line([ANSWERED]))
    journal.close()
    with caplog.at_level(logging.WARNING, logger="baton"):
        assert _loaded(path) == {"RUN#a|RUN": RUN, "RUN#a|INT#1": ASKED}
    assert "line 2 is unreadable" in caplog.text and "2 line(s) left out" in caplog.text


def test_a_compaction_cut_short_loses_nothing(tmp_path: Path) -> None:
    """A crash after the journal was moved aside but before the new snapshot replaced the old one: the old
    snapshot, then `.old`, then the new journal. A second rotation then keeps `.old`'s lines first."""
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok", [json.dumps(RUN)])
    journal = persist.journal_of(path)
    journal.open(truncate=True)
    journal.append(_line([ASKED, MARKER]))
    journal.rotate()  # under the lock, at a compaction; then the process died
    journal.append(_line([ANSWERED], [MARKER]))
    journal.rotate()  # the next compaction finds `.old` still there
    journal.close()
    assert journal.old.exists() and journal.path.stat().st_size == 0
    assert _loaded(path) == {"RUN#a|RUN": RUN, "RUN#a|INT#1": ANSWERED}


def test_the_journal_is_yours_only(tmp_path: Path) -> None:
    journal = persist.journal_of(tmp_path / persist.DATA_FILE)
    journal.open(truncate=True)
    journal.close()
    assert journal.path.stat().st_mode & 0o077 == 0
