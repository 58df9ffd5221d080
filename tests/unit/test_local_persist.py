"""The local stack's data file (baton.local.persist): written whole or not at all, readable back."""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

import pytest

from baton.local import persist

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
