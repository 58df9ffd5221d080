"""The local stack's data file (baton.local.persist): written whole or not at all, readable back."""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

import pytest

from baton.local import persist
from baton.local.persist import line
from baton.models import QuestionRequest, dump_request

if TYPE_CHECKING:
    from pathlib import Path

ITEM = {"PK": {"S": "RUN#a"}, "SK": {"S": "RUN"}, "status": {"S": "running"}}


def test_what_is_saved_loads_back_with_the_token(tmp_path: Path) -> None:
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok-1", [json.dumps(ITEM)])
    saved = persist.load(path)
    assert saved is not None
    assert saved.token == "tok-1"
    assert saved.items == [ITEM]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the bearer token


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok-1", [json.dumps(ITEM)])

    def crash(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        persist.save(path, "tok-2", [])
    saved = persist.load(path)
    assert saved is not None
    assert (saved.token, saved.items) == ("tok-1", [ITEM])
    assert [p.name for p in tmp_path.iterdir()] == [persist.DATA_FILE]  # no temporary left behind


@pytest.mark.parametrize("text", ["", "{", '{"format": 99, "token": "t"}', '["not", "an", "object"]'])
def test_an_unreadable_file_means_a_clean_start(tmp_path: Path, text: str) -> None:
    path = tmp_path / persist.DATA_FILE
    path.write_text(text)
    assert persist.load(path) is None


def test_no_file_means_a_clean_start(tmp_path: Path) -> None:
    assert persist.load(tmp_path / persist.DATA_FILE) is None


def test_saved_text_that_is_not_valid_unicode_is_repaired_on_load_and_counted_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # What the API stored before its door refused lone surrogates: the request's JSON text holds the escape,
    # a plain attribute the character itself (both written as escapes: the files are ASCII JSON).
    request = dump_request(QuestionRequest(node="draft", prompt="q\ud800", options=["a\udc00", "b"]))
    assert "\\ud800" in request
    asked = {"PK": {"S": "RUN#a"}, "SK": {"S": "INT#i1"}, "request": {"S": request}, "node": {"S": "draft\ud800"}}
    later = {"PK": {"S": "RUN#a"}, "SK": {"S": "EVT#1"}, "data": {"S": json.dumps({"why": "\udfff"})}}
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok", [json.dumps(asked), json.dumps(ITEM)])
    journal = persist.journal_of(path)
    journal.open()
    journal.append(line([json.dumps(later)], []))
    journal.close()
    with caplog.at_level("WARNING", logger="baton"):
        saved = persist.load(path)
    assert saved is not None
    by_key = {(i["PK"]["S"], i["SK"]["S"]): i for i in saved.items}
    assert json.loads(by_key[("RUN#a", "INT#i1")]["request"]["S"])["prompt"] == "q\ufffd"
    assert json.loads(by_key[("RUN#a", "INT#i1")]["request"]["S"])["options"] == ["a\ufffd", "b"]
    assert by_key[("RUN#a", "INT#i1")]["node"]["S"] == "draft\ufffd"
    assert json.loads(by_key[("RUN#a", "EVT#1")]["data"]["S"]) == {"why": "\ufffd"}
    assert by_key[("RUN#a", "RUN")] == ITEM  # valid items are untouched
    json.dumps(saved.items, ensure_ascii=False).encode("utf-8")  # valid text all through
    assert [r.getMessage() for r in caplog.records if "not valid Unicode" in r.getMessage()] == [
        "local stack: 2 saved item(s) held text that is not valid Unicode (a lone surrogate, stored before the "
        "API refused them); each such character now reads U+FFFD"
    ]


def test_a_valid_surrogate_pair_or_a_backslash_in_text_is_left_as_it_is(tmp_path: Path) -> None:
    item = {
        "PK": {"S": "RUN#a"},
        "SK": {"S": "INT#i1"},
        "request": {"S": json.dumps({"question": "ship it \U0001f680"})},  # written as the pair's escapes
        "note": {"S": "typed as text: \\ud800"},  # six characters, not JSON
    }
    path = tmp_path / persist.DATA_FILE
    persist.save(path, "tok", [json.dumps(item)])
    saved = persist.load(path)
    assert saved is not None and saved.items == [item]
