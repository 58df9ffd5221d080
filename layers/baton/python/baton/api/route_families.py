"""Which route module serves a path, so that the API function imports a module (its request and response
models, the services behind it) only when a request needs it, not at cold start.

Each module under `baton/api/routes_*.py` serves a disjoint set of paths, told apart by their leading
segments; `family_of` names the module for a path, or None where no family claims it (an unknown path,
`/api/openapi.json`, `/api/docs`), and then every family is loaded so the answer is what the eager app
would give (a 404 decided over every route, a spec describing every route). Because no two families'
routes match the same path, the order in which families are included does not change which route
answers. `tests/unit/test_route_families.py` holds the table to the routes the modules declare: every
route's path maps to the module that declares it, and no route of another module matches it.
"""

from __future__ import annotations

import re

ANSWER_PREFIX = "/answer/"  # the signed email links (routes_email.py); public: the link is the credential

# Module names under baton.api, in the order the eager app included them.
FAMILIES = (
    "routes_runs",
    "routes_run_stop",
    "routes_interrupts",
    "routes_review",
    "routes_questions",
    "routes_inbox",
    "routes_email",
    "routes_claims",
    "routes_audit",
    "routes_tool_approvals",
    "routes_agent_state",
    "routes_away",
    "routes_push",
    "routes_passkeys",
)

_RUN = r"^/api/runs/[^/]+"
_INTERRUPT = r"^/api/v1/interrupts/[^/]+"
# First match wins: the more specific families come before the catch-all of their prefix.
_TABLE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), family)
    for pattern, family in (
        (_RUN + r"/audit(/|$)", "routes_audit"),
        (_RUN + r"/stop$", "routes_run_stop"),
        (_RUN + r"/review(/diff)?$", "routes_review"),
        (_RUN + r"/tool-(approvals|grants)(/|$)", "routes_tool_approvals"),
        (r"^/api/tool-approvals$", "routes_tool_approvals"),  # decided ones across runs
        (_RUN + r"/agent-state(/|$)", "routes_agent_state"),
        (_RUN + r"/(questions|interactions|nodes|await)(/|$)", "routes_questions"),
        (r"^/api/runs(/|$)", "routes_runs"),
        (_INTERRUPT + r"/(claim|reassign)(/|$)", "routes_claims"),
        (r"^/api/v1/interrupts(/|$)", "routes_interrupts"),
        (r"^/api/me/away$", "routes_away"),
        (r"^/api/(push/(key|answer)|me/push-subscriptions(/[^/]+)?)$", "routes_push"),
        (r"^/api/me/webauthn/(register(/options)?|step-up/options|credentials(/[^/]+)?)$", "routes_passkeys"),
        (r"^/api/(inbox|me|stats/waits)$", "routes_inbox"),
        ("^" + ANSWER_PREFIX, "routes_email"),
    )
)


def family_of(path: str) -> str | None:
    """The route module that serves `path`, or None when no single module does."""
    return next((family for pattern, family in _TABLE if pattern.search(path)), None)
