"""Baton's Cedar schema: the principals, actions, resources and context a policy may name.

`baton policy check` validates a policy against it, and a policy that names anything else is refused
before it is taken. Arguments are the resource's tags (Cedar 4's open string maps), so a rule reads any
argument with `resource.hasTag("command") && resource.getTag("command") like "rm *"`."""

from __future__ import annotations

import json
from typing import Any

CONTEXT: dict[str, Any] = {
    "type": "Record",
    "attributes": {
        "risk": {"type": "String"},  # low | medium | high, as the agent declared it
        "run": {"type": "String"},
        "session": {"type": "String"},
        "granted": {"type": "Boolean"},  # an active remembered grant covers the call
        "hour": {"type": "Long"},  # 0..23, UTC
        "weekday": {"type": "Long"},  # 1 (Monday) .. 7, UTC
    },
}

_CTX = {"context": CONTEXT}

SCHEMA: dict[str, Any] = {
    "": {
        "entityTypes": {
            "Agent": {"memberOfTypes": ["Team", "Workflow"], "shape": {"type": "Record", "attributes": {}}},
            "Team": {},
            "Workflow": {},
            "Tool": {},
            "ToolCall": {"memberOfTypes": ["Tool"], "tags": {"type": "String"}},
            "Gate": {"tags": {"type": "String"}},
        },
        "actions": {
            "call_tool": {"appliesTo": {"principalTypes": ["Agent"], "resourceTypes": ["ToolCall"], **_CTX}},
            "pass_gate": {"appliesTo": {"principalTypes": ["Agent"], "resourceTypes": ["Gate"], **_CTX}},
        },
    }
}

SCHEMA_JSON = json.dumps(SCHEMA)
