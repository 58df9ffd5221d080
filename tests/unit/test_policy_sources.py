"""The reloading policy sources (baton.policy.sources): a new good version is taken, a bad one refused with
the last good kept in force, the TTL respected, a failed read harmless; and which source the settings pick."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from baton.adapters.ssm_policy import ParameterPolicy
from baton.policy.source import FixedPolicy
from baton.policy.sources import FilePolicy
from baton.runtime.settings import Settings
from baton.runtime.wiring import policy_source

GOOD = '@id("allow-read") permit(principal, action == Action::"call_tool", resource in Tool::"Read");'
BETTER = '@id("allow-grep") permit(principal, action == Action::"call_tool", resource in Tool::"Grep");'
BAD = "permit(principal,"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeSsm:
    """A parameter whose text and Version a test sets; counts the reads; raises `error` when set."""

    def __init__(self, text: str) -> None:
        self.text, self.version, self.reads = text, 1, 0
        self.error: Exception | None = None

    def put(self, text: str) -> None:
        self.text, self.version = text, self.version + 1

    def get_parameter(self, *, Name: str) -> dict[str, Any]:
        self.reads += 1
        if self.error is not None:
            raise self.error
        return {"Parameter": {"Name": Name, "Value": self.text, "Version": self.version, "Type": "String"}}


def source(ssm: FakeSsm, clock: Clock) -> ParameterPolicy:
    return ParameterPolicy("/baton/dev/policy", ssm, mode="shadow", ttl_seconds=30, clock=clock)


def test_the_parameter_is_taken_with_its_version_and_mode() -> None:
    policy = source(FakeSsm(GOOD), Clock()).current()
    assert policy is not None
    assert policy.version == "ssm:/baton/dev/policy:1" and policy.mode == "shadow"
    assert [r.rule_id for r in policy.rules.values()] == ["allow-read"]


def test_a_new_good_version_is_taken_after_the_ttl_and_not_before() -> None:
    ssm, clock = FakeSsm(GOOD), Clock()
    policies = source(ssm, clock)
    assert policies.current() is not None
    ssm.put(BETTER)
    clock.now += 29.9
    first = policies.current()
    assert first is not None and first.version.endswith(":1") and ssm.reads == 1  # within the TTL: no read
    clock.now += 0.2
    second = policies.current()
    assert second is not None and second.version == "ssm:/baton/dev/policy:2" and ssm.reads == 2
    assert [r.rule_id for r in second.rules.values()] == ["allow-grep"]


def test_a_bad_version_is_refused_logged_once_and_the_last_good_stays(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    ssm, clock = FakeSsm(GOOD), Clock()
    policies = source(ssm, clock)
    good = policies.current()
    ssm.put(BAD)
    for _ in range(3):
        clock.now += 31
        assert policies.current() is good
    (refused,) = [r for r in caplog.records if "refused" in r.getMessage()]  # once, not on every read
    assert (
        refused.getMessage() == "policy ssm:/baton/dev/policy:2 refused (policy ssm:/baton/dev/policy:1 stays in force)"
    )
    assert refused.levelname == "ERROR" and "does not parse" in refused.problems[0]  # type: ignore[attr-defined]
    assert capsys.readouterr().out.count('"PolicyRejected":[1.0]') == 1  # the metric's EMF line
    ssm.put(BETTER)
    clock.now += 31
    taken = policies.current()
    assert taken is not None and taken.version.endswith(":3")


def test_a_bad_first_version_means_no_policy(caplog: pytest.LogCaptureFixture) -> None:
    assert source(FakeSsm(BAD), Clock()).current() is None
    assert "no policy: every call goes to a person" in caplog.text


def test_a_failed_read_keeps_the_last_good(caplog: pytest.LogCaptureFixture) -> None:
    ssm, clock = FakeSsm(GOOD), Clock()
    policies = source(ssm, clock)
    good = policies.current()
    ssm.error = ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "GetParameter")
    clock.now += 31
    assert policies.current() is good
    (warning,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "ThrottlingException" in warning.error  # type: ignore[attr-defined]
    ssm.error = None
    ssm.put(BETTER)
    clock.now += 31
    taken = policies.current()
    assert taken is not None and taken.version.endswith(":2")


def test_a_file_is_re_read_when_its_mtime_changes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "policy.cedar"
    path.write_text(GOOD)
    policies = FilePolicy(path, mode="enforce")
    good = policies.current()
    assert good is not None and good.version.startswith("sha256:") and good.mode == "enforce"
    assert policies.current() is good  # unchanged: the same policy object, not a reload
    _write(path, BAD, 1)
    assert policies.current() is good and policies.current() is good
    (refused,) = [r for r in caplog.records if "refused" in r.getMessage()]  # printed once, not on every call
    assert "does not parse" in refused.problems[0]  # type: ignore[attr-defined]
    _write(path, BETTER, 2)
    taken = policies.current()
    assert taken is not None and [r.rule_id for r in taken.rules.values()] == ["allow-grep"]


def test_a_missing_file_keeps_the_last_good(tmp_path: Path) -> None:
    path = tmp_path / "policy.cedar"
    path.write_text(GOOD)
    policies = FilePolicy(path)
    good = policies.current()
    path.unlink()
    assert good is not None and policies.current() is good


def _write(path: Path, text: str, step: int) -> None:
    path.write_text(text)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + step * 1_000_000_000))  # a new mtime, whatever the fs


def test_the_settings_pick_the_source(tmp_path: Path) -> None:
    def settings(**env: str) -> Settings:
        return Settings.from_env({"BATON_TABLE_NAME": "t", **env})

    assert isinstance(policy_source(settings()), FixedPolicy)
    assert policy_source(settings()).current() is None
    file_source = policy_source(settings(BATON_POLICY_FILE=str(tmp_path / "p.cedar"), BATON_POLICY_MODE="shadow"))
    assert isinstance(file_source, FilePolicy) and file_source.mode == "shadow"
    parameter = policy_source(
        settings(BATON_POLICY_PARAMETER="/baton/dev/policy", BATON_POLICY_TTL_SECONDS="5"), ssm_client=FakeSsm(GOOD)
    )
    assert isinstance(parameter, ParameterPolicy) and parameter.mode == "enforce"
    assert parameter.name == "/baton/dev/policy"


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="shadow"):
        Settings.from_env({"BATON_TABLE_NAME": "t", "BATON_POLICY_MODE": "log"})
