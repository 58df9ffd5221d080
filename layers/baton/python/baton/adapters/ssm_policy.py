"""The deployed policy source: the Cedar policy as an SSM String parameter (infra/capabilities/policy.py).

Its version is the parameter's Version (`ssm:<name>:<Version>`, what the decision log names); it is re-read
at most every `ttl_seconds` (BATON_POLICY_TTL_SECONDS), one GetParameter, and a new Version is taken only
if it loads (`baton.policy.sources.ReloadingPolicy`). A throttled or failed read keeps the last good one."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from baton.policy.sources import DEFAULT_TTL_SECONDS, ReloadingPolicy, Snapshot

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from baton.contracts.policy import PolicyMode


class ParameterReader(Protocol):
    """What `ParameterPolicy` uses of boto3's SSM client."""

    def get_parameter(self, *, Name: str) -> Mapping[str, Any]: ...  # boto3's own argument name


class ParameterPolicy(ReloadingPolicy):
    """An SSM String parameter's text, re-read at most every `ttl_seconds`."""

    read_errors = (ClientError, BotoCoreError)  # throttled, denied, not found, network

    def __init__(
        self,
        name: str,
        client: ParameterReader,
        *,
        mode: PolicyMode = "enforce",
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(mode=mode, ttl_seconds=ttl_seconds, clock=clock, describe=f"ssm:{name}")
        self.name = name
        self._ssm = client

    def _read(self, last_key: str | None) -> Snapshot:
        parameter = self._ssm.get_parameter(Name=self.name)["Parameter"]
        version = f"ssm:{self.name}:{parameter['Version']}"
        return Snapshot(key=version, text=str(parameter["Value"]), version=version)
