"""`POST /slack/interactions`, the part Slack waits for: verify, refuse a replay, queue, ack.

Slack wants its answer within 3 s, and the first request of a container pays for every import on its
way: so this module, and what the `slack_interactions` handler imports with it, hold only what verifying
and queueing need (the standard library, botocore, the SDK's signature verifier), never pydantic models,
the API's resolver or the services (`tests/unit/test_slack_cold_import.py` holds it to that). The answer
runs after the ack in the worker (`worker.py`); the two things that must be decided inside the request
(the "Answer…" button opens its modal with the click's `trigger_id`; a modal's values are checked
against the answer schema, so a refused one comes back as Slack's per-field error) go to `FormDesk`
(`interactions.py`), loaded on the first such request.

Order matters, and is the whole point:
1. the signature (`X-Slack-Signature`, HMAC-SHA256 over `v0:{timestamp}:{raw body}` with the signing
   secret, timestamp within 5 minutes, constant-time compare: `slack_sdk`'s `SignatureVerifier`) is
   checked on the raw bytes before anything is parsed: a bad one or an old timestamp is a 401;
2. the signature is then written once (`ReplayGuard`, a conditional write with a TTL): a request seen
   before is refused (409) and changes nothing;
3. only then the payload is parsed, the Slack user mapped to a Baton operator (unmapped: the worker
   tells them why not), and the work handed to the worker (`JobQueue`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs

from baton.channels.slack.jobs import (
    ID_PATTERN,
    MODAL_CALLBACK,
    OPEN_FORM_ACTION,
    OPTION_ACTION,
    REVIEW_ACTION,
    MessageRef,
    SlackJob,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import ModuleType

WINDOW_SECONDS = 5 * 60  # Slack's: a request older than this is refused (slack_sdk checks the same)
REVIEW_BUTTONS = ("request_changes", "approve_merge")  # the review actions a Slack button may take
_SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,30}$")
_OPERATOR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9@._+-]{0,127}$")


class ReplayGuard(Protocol):
    def first_use(self, signature: str, *, expires_at: int) -> bool:
        """True the first time `signature` is seen; False for every later use (kept until expires_at)."""
        ...


class JobQueue(Protocol):
    def submit(self, job: SlackJob) -> None:
        """Run `job` in the worker after this request is answered."""
        ...


@dataclass(frozen=True)
class SlackReply:
    """What the interaction endpoint answers: a status and a JSON body (None: an empty 200, Slack's ack)."""

    status: int = 200
    body: dict[str, Any] | None = None

    @classmethod
    def refused(cls, status: int, message: str, code: str) -> SlackReply:
        return cls(status=status, body={"error": code, "message": message})


@dataclass(frozen=True)
class Click:
    """A Baton button's click, read from Slack's `block_actions` payload."""

    action_id: str
    run_id: str
    interaction_id: str
    option: int | None
    slack_user: str
    trigger_id: str | None
    message: MessageRef


class FormDesk(Protocol):
    """What is decided inside the request beyond a queued click (`interactions.py`)."""

    def open_modal(self, click: Click, operator: str) -> SlackReply: ...
    def submit_view(self, payload: dict[str, Any]) -> SlackReply: ...


def not_an_operator(slack_user: str) -> str:
    return f"you are not a Baton operator: ask your admin to map {slack_user}"


def parse_operators(raw: str | None) -> dict[str, str]:
    """`{"<slack user id>": "<operator>"}`; anything else is a configuration error (raised at cold start)."""
    if raw is None or not raw.strip():
        return {}
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the Slack operator mapping must be a JSON object {slack_user_id: operator}")
    mapping: dict[str, str] = {}
    for user, operator in data.items():
        if not _SLACK_USER.match(str(user)) or not isinstance(operator, str) or not _OPERATOR.match(operator):
            raise ValueError(f"bad Slack operator mapping entry {user!r}: {operator!r}")
        mapping[str(user)] = operator
    return mapping


@cache
def signature_module() -> ModuleType:
    """`slack_sdk.signature`, the SDK's verifier, loaded from its own file: importing it by name runs
    `slack_sdk/__init__.py` first, which imports the whole Web API client (most of a cold ack). The
    module needs only hashlib, hmac and time."""
    found = sys.modules.get("slack_sdk.signature")
    if found is not None:
        return found
    package = importlib.util.find_spec("slack_sdk")
    assert package is not None and package.submodule_search_locations is not None
    path = os.path.join(next(iter(package.submodule_search_locations)), "signature", "__init__.py")
    spec = importlib.util.spec_from_file_location("baton_slack_signature", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SlackAck:
    def __init__(
        self,
        *,
        signing_secret: Callable[[], str],
        operators: Callable[[], dict[str, str]],
        replay: ReplayGuard,
        jobs: JobQueue,
        forms: Callable[[], FormDesk],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._secret = signing_secret
        self._operators = operators
        self._replay = replay
        self._jobs = jobs
        self._forms = forms
        self._clock = clock

    def handle(self, body: bytes, headers: Mapping[str, str]) -> SlackReply:
        refused = self._verify(body, headers)
        if refused is not None:
            return refused
        try:
            payload = _parse(body)
        except ValueError as err:
            return SlackReply.refused(400, f"not a Slack interaction payload: {str(err)[:200]}", "bad_request")
        if payload.get("type") == "block_actions":
            return self._block_action(payload)
        view = payload.get("view")
        if payload.get("type") == "view_submission" and isinstance(view, dict):
            if view.get("callback_id") != MODAL_CALLBACK:
                return SlackReply()
            return self._forms().submit_view(payload)
        return SlackReply()  # other interaction types: acknowledged, nothing to do

    def _verify(self, body: bytes, headers: Mapping[str, str]) -> SlackReply | None:
        """None when the request is Slack's, signed within the window and seen for the first time."""
        lowered = {k.lower(): v for k, v in headers.items()}
        timestamp = lowered.get("x-slack-request-timestamp")
        signature = lowered.get("x-slack-signature")
        if not timestamp or not signature or not timestamp.isdigit():
            return SlackReply.refused(401, "missing or malformed Slack signature headers", "unauthorized")
        sdk = signature_module()
        verifier = sdk.SignatureVerifier(self._secret(), clock=_clock_of(sdk, self._clock))
        if not verifier.is_valid(body=body, timestamp=timestamp, signature=signature):
            return SlackReply.refused(401, "bad Slack signature, or a timestamp outside 5 minutes", "unauthorized")
        if not self._replay.first_use(signature, expires_at=int(timestamp) + WINDOW_SECONDS + 60):
            return SlackReply.refused(409, "this Slack request was already received (a replay)", "replayed")
        return None

    def _block_action(self, payload: dict[str, Any]) -> SlackReply:
        click = _click_of(payload)
        if click is None:
            return SlackReply()  # the inbox link button, or someone else's
        if isinstance(click, SlackReply):
            return click
        operator = self._operators().get(click.slack_user)
        if operator is None:
            self._jobs.submit(
                SlackJob(
                    action="refuse",
                    slack_user=click.slack_user,
                    run_id=click.run_id,
                    interaction_id=click.interaction_id,
                    message=click.message,
                )
            )
            return SlackReply()
        if click.action_id == OPEN_FORM_ACTION:
            return self._forms().open_modal(click, operator)
        job = _answer_job(click, operator)
        if isinstance(job, SlackReply):
            return job
        self._jobs.submit(job)
        return SlackReply()


def _answer_job(click: Click, operator: str) -> SlackJob | SlackReply:
    """The worker's job for an option or a review button, or the 400 of a button Baton did not make."""
    review = click.action_id.removeprefix(f"{REVIEW_ACTION}_") if click.action_id.startswith(REVIEW_ACTION) else None
    if review is not None and review not in REVIEW_BUTTONS:
        return SlackReply.refused(400, f"{review!r} is not a review action a Slack button takes", "bad_request")
    if review is None and click.option is None:
        return SlackReply.refused(400, "an option button without its option", "bad_request")
    return SlackJob(
        action="answer",
        slack_user=click.slack_user,
        operator=operator,
        run_id=click.run_id,
        interaction_id=click.interaction_id,
        option=click.option if review is None else None,
        review_action=review,
        message=click.message,
    )


def _clock_of(sdk: ModuleType, now: Callable[[], float]) -> Any:
    """slack_sdk's clock over an injected time source."""

    class InjectedClock(sdk.Clock):  # type: ignore[name-defined,misc]
        def now(self) -> float:
            return float(now())

    return InjectedClock()


def _parse(body: bytes) -> dict[str, Any]:
    """Slack posts `application/x-www-form-urlencoded` with one field, `payload`, holding the JSON."""
    try:
        fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
        raw = fields.get("payload")
        if not raw:
            raise ValueError("no payload field")
        payload = json.loads(raw[0])
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(str(err)) from None
    if not isinstance(payload, dict):
        raise ValueError("the payload is not a JSON object")
    user = payload.get("user")
    if not isinstance(user, dict) or not isinstance(user.get("id"), str) or not 0 < len(user["id"]) <= 64:
        raise ValueError("user.id: a Slack payload names its user")
    if not isinstance(payload.get("type"), str):
        raise ValueError("type: a Slack payload names its type")
    return payload


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _click_of(payload: dict[str, Any]) -> Click | SlackReply | None:
    """The Baton button clicked (None: not one of ours), or a 400 for a value Baton did not make."""
    actions = payload.get("actions")
    action = actions[0] if isinstance(actions, list) and actions and isinstance(actions[0], dict) else {}
    action_id, value = _str(action.get("action_id")) or "", _str(action.get("value"))
    if not value or not action_id.startswith((OPTION_ACTION, OPEN_FORM_ACTION, REVIEW_ACTION)):
        return None
    try:
        button = json.loads(value)
    except json.JSONDecodeError:
        button = None
    run_id, iid = (button.get("r"), button.get("i")) if isinstance(button, dict) else (None, None)
    option = button.get("o") if isinstance(button, dict) else None
    if (
        not isinstance(button, dict)
        or set(button) - {"r", "i", "o"}
        or not (isinstance(run_id, str) and ID_PATTERN.match(run_id))
        or not (isinstance(iid, str) and ID_PATTERN.match(iid))
        or not (option is None or (isinstance(option, int) and not isinstance(option, bool) and option >= 0))
    ):
        return SlackReply.refused(400, "the button's value is not one Baton made", "bad_request")
    container = payload.get("container") if isinstance(payload.get("container"), dict) else {}
    assert isinstance(container, dict)
    return Click(
        action_id=action_id,
        run_id=run_id,
        interaction_id=iid,
        option=option,
        slack_user=payload["user"]["id"],
        trigger_id=_str(payload.get("trigger_id")),
        message=MessageRef(
            response_url=_str(payload.get("response_url")),
            channel=_str(container.get("channel_id")),
            ts=_str(container.get("message_ts")),
        ),
    )
