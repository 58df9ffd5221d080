"""Where the policy in force comes from: the port the service reads before each decision.

Deployed, a versioned SSM parameter or S3 object; locally, `baton dev --policy FILE`; in tests, a fixed
one. Every source hands out only a policy that loaded (`Policy.load` checked it): a bad new version
never replaces a good one, it is logged and the last good one stays in force."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
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
