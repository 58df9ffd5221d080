"""The path=value state-edit grammar: parsing, applying, errors, all-or-nothing, no mutation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.domain.state_edits import StateEdit, apply_state_edits, format_path, parse_edit
from baton.errors import ValidationFailedError

pytestmark = pytest.mark.disable_socket


def _state() -> dict[str, Any]:
    return {
        "build": {"sha": "abc1234", "tags": ["a", "b"]},
        "retries": 1,
        "items": [{"name": "first"}, {"name": "second"}, {"name": "third"}],
        "config": {"featureFlag": False},
    }


# --- parsing ---------------------------------------------------------------------------------------


def test_parse_dot_path_and_json_value() -> None:
    edit = parse_edit("config.featureFlag=true")
    assert edit == StateEdit(text="config.featureFlag=true", path=("config", "featureFlag"), value=True)
    assert edit.path_text == "config.featureFlag"


def test_parse_dollar_prefix_is_optional() -> None:
    assert parse_edit("$.a.b=1").path == parse_edit("a.b=1").path == ("a", "b")


def test_parse_bracket_indices_are_ints_and_dot_digits_are_strings() -> None:
    assert parse_edit("items[2].name=x").path == ("items", 2, "name")
    assert parse_edit("items.2.name=x").path == ("items", "2", "name")
    assert parse_edit("grid[0][1]=x").path == ("grid", 0, 1)


def test_parse_splits_at_first_equals_and_strips_path_whitespace() -> None:
    edit = parse_edit(" expr = a=b")
    assert edit.path == ("expr",)
    assert edit.value == " a=b"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("true", True),
        ("false", False),
        ("null", None),
        ("3", 3),
        ("-2.5", -2.5),
        ('{"a":1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('"quoted"', "quoted"),
        ('"5"', "5"),
        ("hello world", "hello world"),
        ("", ""),
        ("{not json", "{not json"),
        ("NaN", "NaN"),
        ("Infinity", "Infinity"),
        ("1e999", "1e999"),
    ],
)
def test_values_are_json_when_possible_else_raw_strings(raw: str, expected: Any) -> None:
    assert parse_edit(f"k={raw}").value == expected


@pytest.mark.parametrize("path", ["a", "a.b.c", "items[2].name", "items.2.name", "m[0][1].x"])
def test_format_path_round_trips(path: str) -> None:
    assert format_path(parse_edit(f"{path}=1").path) == path


# --- applying --------------------------------------------------------------------------------------


def test_seed_example_edits() -> None:
    result = apply_state_edits(_state(), ["retries=5", "config.featureFlag=true"])
    assert result["retries"] == 5
    assert result["config"] == {"featureFlag": True}


def test_nested_path_creates_missing_objects() -> None:
    result = apply_state_edits({}, ["a.b.c=1", "a.b.d=x"])
    assert result == {"a": {"b": {"c": 1, "d": "x"}}}


def test_array_element_by_bracket_and_by_dot_index() -> None:
    result = apply_state_edits(_state(), ["items[2].name=x", "items.0.name=y", "build.tags[1]=z"])
    assert [item["name"] for item in result["items"]] == ["y", "second", "x"]
    assert result["build"]["tags"] == ["a", "z"]


def test_whole_array_element_can_be_replaced() -> None:
    result = apply_state_edits(_state(), ['items[1]={"name":"new","extra":true}'])
    assert result["items"][1] == {"name": "new", "extra": True}


def test_dot_digits_on_an_object_are_a_key() -> None:
    assert apply_state_edits({"m": {}}, ["m.2=x"]) == {"m": {"2": "x"}}
    assert apply_state_edits({}, ["m.2=x"]) == {"m": {"2": "x"}}


def test_json_value_vs_string_value() -> None:
    result = apply_state_edits({}, ["n=3", 's="3"', 'o={"a": [1]}', "r=plain text"])
    assert result == {"n": 3, "s": "3", "o": {"a": [1]}, "r": "plain text"}


def test_later_edits_see_earlier_ones() -> None:
    assert apply_state_edits({}, ["a=[1,2]", "a[1]=9"]) == {"a": [1, 9]}


def test_returns_new_dict_and_never_mutates_input() -> None:
    state = _state()
    before = copy.deepcopy(state)
    result = apply_state_edits(state, ["build.sha=zzz", "items[0].name=x", "new.key=1"])
    assert state == before
    assert result is not state
    result["items"][1]["name"] = "mutated later"
    assert state == before


def test_no_edits_returns_an_equal_copy() -> None:
    state = _state()
    result = apply_state_edits(state, [])
    assert result == state
    assert result is not state


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "path", "reason_part"),
    [
        ("items[5]=1", "items[5]", "past the end"),
        ("items[3].name=1", "items[3]", "past the end"),
        ("items.3=1", "items.3", "past the end"),
        ("config[0]=1", "config[0]", "not an array"),
        ("missing[0]=1", "missing[0]", "not an array"),
        ("retries.x=1", "retries.x", "cannot descend"),
        ("build.sha.x.y=1", "build.sha.x", "cannot descend"),
        ("items.name=1", "items.name", "not an index"),
        ("items[-1]=1", "items[-1]", "non-negative integer"),
        ("items[x]=1", "items[x]", "non-negative integer"),
        ("=1", "$", "empty"),
        ("$.=1", "$.", "empty"),
        ("$=1", "$", "empty"),
        ("a..b=1", "a.", "empty path segment"),
        ("a.=1", "a.", "empty path segment"),
        (".a=1", ".a", "empty path segment"),
        ("[0]=1", "[0]", "empty path segment"),
        ("a[1]b=1", "a[1]b", "malformed"),
        ("retries", "retries", "no '='"),
    ],
)
def test_bad_edits_raise_validation_failed_naming_edit_and_path(edit: str, path: str, reason_part: str) -> None:
    state = _state()
    before = copy.deepcopy(state)
    with pytest.raises(ValidationFailedError) as info:
        apply_state_edits(state, [edit])
    err = info.value
    assert err.details["edit"] == edit
    assert err.details["path"] == path
    assert err.details["index"] == 0
    assert reason_part in err.details["reason"]
    assert edit in err.message
    assert path in err.message
    assert err.code == "validation_failed" and err.http_status == 422
    assert state == before


def test_error_detail_shape_from_the_brief() -> None:
    with pytest.raises(ValidationFailedError) as info:
        apply_state_edits({"items": [1, 2]}, ["items[5]=1"])
    assert {"path": "items[5]", "edit": "items[5]=1"}.items() <= info.value.details.items()


def test_all_or_nothing_when_a_later_edit_fails() -> None:
    state = _state()
    before = copy.deepcopy(state)
    with pytest.raises(ValidationFailedError) as info:
        apply_state_edits(state, ["retries=9", "config.featureFlag=true", "items[7]=x"])
    assert info.value.details["index"] == 2
    assert state == before


def test_malformed_edit_anywhere_fails_before_anything_applies() -> None:
    state = _state()
    with pytest.raises(ValidationFailedError) as info:
        apply_state_edits(state, ["retries=9", "no equals sign"])
    assert info.value.details["index"] == 1
    assert state == _state()


def test_non_string_edit_and_single_string_are_rejected() -> None:
    with pytest.raises(ValidationFailedError):
        apply_state_edits({}, [3])  # type: ignore[list-item]
    with pytest.raises(ValidationFailedError, match="list"):
        apply_state_edits({}, "a=1")


def test_state_must_be_an_object() -> None:
    with pytest.raises(ValidationFailedError):
        apply_state_edits([1, 2], ["a=1"])  # type: ignore[arg-type]


# --- properties ------------------------------------------------------------------------------------

_KEYS = st.sampled_from(["a", "b", "c", "0", "1"])
_SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text("xyz", max_size=3)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)
_STATES = st.dictionaries(_KEYS, _VALUES, max_size=4)
_TOKENS = st.tuples(_KEYS, st.lists(_KEYS | st.integers(0, 2), max_size=3)).map(lambda parts: (parts[0], *parts[1]))


def _assert_only_path_changed(before: Any, after: Any, path: tuple[str | int, ...], value: Any) -> None:
    """`after` equals `before` everywhere except along `path`, whose end holds `value`."""
    if not path:
        assert after == value
        return
    head, rest = path[0], path[1:]
    if isinstance(after, dict):
        assert isinstance(head, str)
        base = before if isinstance(before, dict) else {}  # a missing intermediate was created as {}
        assert set(after) == set(base) | {head}
        for key in after:
            if key != head:
                assert after[key] == base[key]
        _assert_only_path_changed(base.get(head), after[head], rest, value)
    else:
        assert isinstance(after, list) and isinstance(before, list)
        index = int(head)
        assert len(after) == len(before)
        for i, item in enumerate(after):
            if i != index:
                assert item == before[i]
        _assert_only_path_changed(before[index], after[index], rest, value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=_STATES, tokens=_TOKENS, value=_VALUES, dollar=st.booleans())
def test_an_edit_touches_only_its_path_and_never_mutates_input(
    state: dict[str, Any], tokens: tuple[str | int, ...], value: Any, dollar: bool
) -> None:
    path = format_path(tokens)
    edit = f"{'$.' if dollar else ''}{path}={json.dumps(value)}"
    before = copy.deepcopy(state)
    try:
        result = apply_state_edits(state, [edit])
    except ValidationFailedError as exc:
        assert exc.details["edit"] == edit
        assert path.startswith(exc.details["path"])  # the failing path is a prefix of the edit's path
    else:
        _assert_only_path_changed(before, result, tokens, value)
    assert state == before


@settings(max_examples=100, deadline=None)
@given(
    state=_STATES,
    edits=st.lists(st.tuples(_TOKENS, _VALUES), min_size=1, max_size=4),
)
def test_many_edits_are_all_or_nothing(state: dict[str, Any], edits: list[tuple[tuple[str | int, ...], Any]]) -> None:
    texts = [f"{format_path(tokens)}={json.dumps(value)}" for tokens, value in edits]
    before = copy.deepcopy(state)
    try:
        result = apply_state_edits(state, texts)
    except ValidationFailedError as exc:
        # The same edits one at a time would fail at the reported edit, having applied the earlier ones.
        index = exc.details["index"]
        partial = apply_state_edits(state, texts[:index])
        with pytest.raises(ValidationFailedError):
            apply_state_edits(partial, [texts[index]])
    else:
        step = before
        for text in texts:
            step = apply_state_edits(step, [text])
        assert result == step
    assert state == before
