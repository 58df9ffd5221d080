"""The files `baton policy test` and `baton policy check --must-ask` read, as typed models.

A cases file is a JSON list of `{name, query, expect}`: `query` is a `PolicyQuery` (the call), `expect` the
outcome and, when given, the deciding rule (`null`: no rule matched), the approvers and the quorum. A
must-ask file is a JSON list of `{name, query}`: calls that must never be allowed, whatever the context.
A file that does not parse or does not fit is refused naming each entry's index and name (`CasesFileError`).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from baton.contracts.policy import PolicyDecision, PolicyOutcome, PolicyQuery


class _FileEntry(BaseModel):
    # A typo in a fixture (`expects`, `quorom`) must fail loudly, not test less than it says.
    model_config = ConfigDict(extra="forbid")


class Expectation(_FileEntry):
    outcome: PolicyOutcome
    rule: str | None = Field(default=None, description="The deciding rule's @id; null: no rule matched.")
    approvers: list[str] | None = None
    quorum: int | None = Field(default=None, ge=1)

    def mismatches(self, got: PolicyDecision) -> list[str]:
        """What `got` differs in, as `field: expected X, got Y` (only the fields the case names)."""
        ask = got.ask
        pairs: list[tuple[str, Any, Any]] = [("outcome", self.outcome, got.outcome)]
        if "rule" in self.model_fields_set:
            pairs.append(("rule", self.rule, got.rule))
        if self.approvers is not None:
            pairs.append(("approvers", self.approvers, ask.approvers if ask else None))
        if self.quorum is not None:
            pairs.append(("quorum", self.quorum, ask.quorum if ask else None))
        return [f"{name}: expected {_shown(want)}, got {_shown(have)}" for name, want, have in pairs if want != have]

    def shown(self) -> dict[str, Any]:
        """The expectation as the case file wrote it (for --json)."""
        return self.model_dump(mode="json", include=self.model_fields_set | {"outcome"})


class _NamedCall(_FileEntry):
    name: str = Field(min_length=1)
    query: PolicyQuery

    @field_validator("query", mode="before")
    @classmethod
    def _known_query_fields(cls, value: Any) -> Any:
        # PolicyQuery ignores unknown keys (a newer server's); a fixture's `argument` typo must not.
        unknown = sorted(set(value) - set(PolicyQuery.model_fields)) if isinstance(value, dict) else []
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)} (known: {', '.join(PolicyQuery.model_fields)})")
        return value


Entry = TypeVar("Entry", bound=_NamedCall)


class PolicyCase(_NamedCall):
    expect: Expectation


class MustAskCall(_NamedCall):
    """A call the policy must never allow, under any context."""


class CasesFileError(ValueError):
    """A cases or must-ask file that cannot be used: `problems` names each entry by index and name."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _shown(value: Any) -> str:
    return "none" if value is None else json.dumps(value) if not isinstance(value, str) else value


def _entries(text: str, model: type[Entry]) -> list[Entry]:
    try:
        raw = json.loads(text)
    except ValueError as err:
        raise CasesFileError([f"not JSON: {err}"]) from err
    if not isinstance(raw, list):
        raise CasesFileError([f"expected a JSON list of entries, got a {type(raw).__name__}"])
    entries: list[Entry] = []
    problems: list[str] = []
    for index, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else None
        where = f"entry {index}" + (f" ({name})" if isinstance(name, str) and name else "")
        try:
            entries.append(model.model_validate(item))
        except ValidationError as err:
            for e in err.errors():
                field = ".".join(str(part) for part in e["loc"]) or "entry"
                problems.append(f"{where}: {field}: {e['msg']}")
    names = [entry.name for entry in entries]
    problems += [f"name {n!r} is used twice" for n in sorted({n for n in names if names.count(n) > 1})]
    if problems:
        raise CasesFileError(problems)
    return entries


def load_cases(text: str) -> list[PolicyCase]:
    return _entries(text, PolicyCase)


def load_must_ask(text: str) -> list[MustAskCall]:
    return _entries(text, MustAskCall)
