"""Where the policy in force comes from: the port the service reads before each decision.

Deployed, a versioned SSM parameter or S3 object; locally, `baton dev --policy FILE`; in tests, a fixed
one. Every source hands out only a policy that loaded (`Policy.load` checked it): a bad new version
never replaces a good one, it is logged and the last good one stays in force."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from baton.contracts.policy import PolicyDecision

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts.policy import PolicyQuery
    from baton.policy.engine import Policy


class PolicySource(Protocol):
    def current(self) -> Policy | None:
        """The policy in force now (None: no policy, every call goes to a person as before)."""
        ...


class FixedPolicy:
    """One policy (or none) for the process's life: tests, and a stack deployed without hot reload."""

    def __init__(self, policy: Policy | None = None) -> None:
        self._policy = policy

    def current(self) -> Policy | None:
        return self._policy


log = logging.getLogger("baton")

POLICY_FAILED = "the policy failed to decide ({error}): a person decides"


def decide_or_ask(source: PolicySource, query: Callable[[], PolicyQuery], *, run_id: str) -> PolicyDecision | None:
    """The decision of the policy in force on `query()` (None: no policy). A policy that fails never allows:
    its decision is `ask` (a person), and the failure is logged."""
    policy = None
    try:
        policy = source.current()
        return None if policy is None else policy.decide(query())
    except Exception as err:
        log.exception("the policy failed; a person decides", extra={"run_id": run_id})
        if policy is None:
            return None
        return PolicyDecision(
            outcome="ask", reason=POLICY_FAILED.format(error=err), policy_version=policy.version, mode=policy.mode
        )
