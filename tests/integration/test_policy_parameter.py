"""ParameterPolicy against moto's SSM: the deployed policy's versions as SSM numbers them, a bad version
refused with the last good kept, a missing parameter harmless, a large (advanced-tier) policy read whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.adapters.ssm_policy import ParameterPolicy
from baton.runtime.settings import Settings
from baton.runtime.wiring import policy_source

NAME = "/baton/it/policy"
GOOD = '@id("allow-read") permit(principal, action == Action::"call_tool", resource in Tool::"Read");'
BETTER = '@id("allow-grep") permit(principal, action == Action::"call_tool", resource in Tool::"Grep");'
BAD = '@id("x") permit(principal, action, resource) when { context.nope };'


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def ssm(aws_env: None) -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("ssm")


def put(ssm: Any, text: str, *, tier: str = "Standard") -> None:
    ssm.put_parameter(Name=NAME, Value=text, Type="String", Overwrite=True, Tier=tier)


def test_versions_are_taken_as_ssm_numbers_them_and_a_bad_one_never_replaces_a_good_one(ssm: Any) -> None:
    clock = Clock()
    policies = ParameterPolicy(NAME, ssm, ttl_seconds=30, clock=clock)
    assert policies.current() is None  # no parameter yet: a failed read, no policy
    put(ssm, GOOD)
    clock.now += 30
    first = policies.current()
    assert first is not None and first.version == f"ssm:{NAME}:1"
    put(ssm, BAD)
    clock.now += 30
    assert policies.current() is first
    put(ssm, BETTER)
    clock.now += 10
    assert policies.current() is first  # within the TTL
    clock.now += 20
    taken = policies.current()
    assert taken is not None and taken.version == f"ssm:{NAME}:3"
    assert [r.rule_id for r in taken.rules.values()] == ["allow-grep"]


def test_a_policy_over_4_kb_in_the_advanced_tier_is_read_whole(ssm: Any) -> None:
    rules = "\n".join(
        f'@id("allow-{n}") permit(principal, action == Action::"call_tool", resource in Tool::"T{n}");'
        for n in range(80)
    )
    assert len(rules) > 4096
    put(ssm, rules, tier="Advanced")
    settings = Settings.from_env(
        {"BATON_TABLE_NAME": "t", "BATON_POLICY_PARAMETER": NAME, "BATON_POLICY_MODE": "shadow"}
    )
    policy = policy_source(settings, ssm_client=ssm).current()
    assert policy is not None and len(policy.rules) == 80 and policy.mode == "shadow"
