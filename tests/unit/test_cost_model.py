"""The cost model's arithmetic (bench/parts/cost_model.py): prices.json's lines read per unit, Lambda's
GB-seconds rounded as Lambda bills them, counts times prices times lives, and DynamoDB's capacity rounding
(parts/capacity.py) carried into a price. The lives themselves run in the bench, never asserted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "parts"))
from capacity import read_units, write_units
from cost_model import PRICED_BY, PRICES, LifeCounts, billed_gb_seconds, cost_of, median_life, unit_prices


def _counts(calls: int = 3, **given: float) -> LifeCounts:
    zero: dict[str, float] = dict.fromkeys(PRICED_BY, 0)
    return LifeCounts(kind="question", calls_by_service={"dynamodb": calls, "sns": 1}, **{**zero, **given})


def test_every_price_has_its_region_date_source_and_whether_it_was_verified() -> None:
    prices = json.loads(PRICES.read_text())
    assert prices["region"] == "us-east-1" and prices["looked_up"]
    assert set(PRICED_BY.values()) <= set(prices["prices"])
    for name, line in prices["prices"].items():
        assert line["usd"] > 0 and line["per"] >= 1, name
        assert line["source"].count("https://") >= 1, name
        assert line["verified"] in ("primary", "secondary", "unverified"), name


def test_unit_prices_divide_each_line_by_its_quantity() -> None:
    per_unit = unit_prices(
        {"prices": {"a": {"usd": 0.625, "per": 1_000_000}, "b": {"usd": 0.025, "per": 1000}, "c": {"usd": 2, "per": 1}}}
    )
    assert per_unit == {"a": pytest.approx(0.625e-6), "b": pytest.approx(25e-6), "c": 2}


def test_gb_seconds_round_each_duration_up_to_the_millisecond() -> None:
    assert billed_gb_seconds([(1024, 0.0001)]) == pytest.approx(0.001)  # 0.1 ms bills as 1 ms
    assert billed_gb_seconds([(512, 0.0105)]) == pytest.approx(0.5 * 0.011)
    assert billed_gb_seconds([(1024, 0.002), (256, 1.0)]) == pytest.approx(0.002 + 0.25)
    assert billed_gb_seconds([]) == 0


def test_a_lives_cost_is_each_count_times_its_price_times_the_lives() -> None:
    per_unit = dict.fromkeys(PRICED_BY.values(), 0.0)
    per_unit |= {"dynamodb_write_request_unit": 1e-6, "stepfunctions_standard_state_transition": 25e-6}
    usd = cost_of(_counts(write_units=50, state_transitions=10, sns_publishes=2), per_unit, lives=1000)
    assert usd["dynamodb_write_request_unit"] == pytest.approx(50 * 1e-6 * 1000)
    assert usd["stepfunctions_standard_state_transition"] == pytest.approx(10 * 25e-6 * 1000)
    assert usd["sns_publish"] == 0  # priced at zero here
    assert usd["total"] == pytest.approx(0.05 + 0.25)
    assert _counts().calls == 4


def test_capacity_rounding_carries_into_the_price() -> None:
    # a 1.5 KB item put in a transaction: 2 units, doubled; a 5 KB eventually consistent read: 2 units, halved
    writes = 2 * write_units(0, 1536)
    reads = read_units(5 * 1024, consistent=False)
    assert (writes, reads) == (4, 1.0)
    per_unit = unit_prices(json.loads(PRICES.read_text()))
    usd = cost_of(_counts(write_units=writes, read_units=reads), per_unit, lives=1_000_000)
    assert usd["dynamodb_write_request_unit"] == pytest.approx(4 * 0.625)  # 4 WRU a life, $0.625 per million
    assert usd["dynamodb_read_request_unit"] == pytest.approx(1 * 0.125)


def test_the_row_of_a_kind_is_its_life_with_the_median_calls() -> None:
    lives = [_counts(calls=29, write_units=1), _counts(calls=27, write_units=2), _counts(calls=31, write_units=3)]
    assert median_life(lives).write_units == 1
    assert median_life(lives[:1]) == lives[0]
