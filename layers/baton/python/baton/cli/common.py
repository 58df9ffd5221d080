"""What every command group shares: the consoles, the SDK client, one readable error line, JSON output
and the parsing of `key=value` answers. Kept light: `baton --help` imports it, the SDK only on use."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from baton.errors import BatonError

if TYPE_CHECKING:
    from baton.client.sdk import Client

console = Console(soft_wrap=True)  # URLs and commands stay copy-pasteable
plain_console = Console(highlight=False, soft_wrap=True)  # text shown as is (prompts, JSON, state)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def client() -> Client:
    """The SDK client for the configured API (flags-free: environment, then .baton/local.json)."""
    from baton.client.sdk import Client

    return Client()


# The records a refusal carries for programs (the interaction, the interrupt, the stored answer): a
# person gets the winner in words instead (`winner_in_words`).
RECORD_DETAILS = ("interaction", "interrupt", "answer", "winner")


def winner_in_words(winner: dict[str, Any]) -> str:
    """`errors.winner(...)` as a sentence: who settled it, how, with what and when."""
    status = str(winner.get("status") or "settled").replace("_", " ")
    line = f"it was {status} by {winner.get('by') or 'baton'}"
    if winner.get("value") is not None:
        line += f" with {json.dumps(winner['value'], default=str)}"
    if winner.get("at"):
        line += f" at {winner['at']}"
    return line + "; nothing was changed by this call"


def age(created_at: str, now: datetime | None = None) -> str:
    """How long ago `created_at` (ISO-8601) was: 42s, 5m, 3h, 2d (? when it is not a time)."""
    try:
        created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    seconds = int(((now or datetime.now(UTC)) - created).total_seconds())
    if seconds < 120:
        return f"{max(seconds, 0)}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def fail(err: BatonError, *, hide: Iterable[str] = ()) -> NoReturn:
    """One readable error line and its details (except `hide`), then exit 1. A refusal that names
    its winner (a 409: already answered, resumed, claimed) says it in words, without the records."""
    hidden = {"error", *hide}
    err_console.print(f"[bold red]error[/] ({err.code}): {escape(err.message)}")
    winner = err.details.get("winner")
    if isinstance(winner, dict):
        err_console.print(f"  {escape(winner_in_words(winner))}")
        hidden.update(RECORD_DETAILS)
    for key, value in err.details.items():
        if key not in hidden:
            err_console.print(f"  {key}: {escape(json.dumps(value, default=str)[:400])}")
    raise typer.Exit(code=1)


DELIVERY_PENDING_EXIT = 5  # an answer stored whose send failed: not an error, not yet resumed either
PENDING_DELIVERY = "answer stored; its delivery is pending (the send failed; the reconciler sends it within a minute)"


def exit_if_delivery_pending(delivery: str | None) -> None:
    """The exit code follows the outcome: a stored answer whose delivery is pending exits 5 (the workflow
    is not resumed yet; sending it again is not needed), after the caller printed what happened."""
    if delivery == "pending":
        raise typer.Exit(code=DELIVERY_PENDING_EXIT)


def usage(message: str) -> NoReturn:
    err_console.print(f"[bold red]error[/]: {escape(message)}")
    raise typer.Exit(code=2)


def _jsonable(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return str(value)


def to_json(data: Any, *, indent: int | None = 2) -> str:
    """SDK results (contracts) as their wire JSON."""
    return json.dumps(data, indent=indent, default=_jsonable)


def print_json(data: Any) -> None:
    sys.stdout.write(to_json(data) + "\n")


def parse_answers(pairs: list[str]) -> dict[str, Any]:
    """`key=value` pairs; a value is parsed as JSON when it can be, else kept as a string."""
    answers: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected key=value, got {pair!r}", param_hint="--answer")
        try:
            answers[key] = json.loads(raw)
        except ValueError:
            answers[key] = raw
    return answers


def parse_json(raw: str, param_hint: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as err:
        raise typer.BadParameter(f"not JSON: {err}", param_hint=param_hint) from err
