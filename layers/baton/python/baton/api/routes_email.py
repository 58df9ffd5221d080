"""The email answer links' pages: `GET /answer/<link>` (the confirmation page; changes nothing) and
`POST /answer/<link>` (its form: answers once, as the link's recipient). No caller identity: the signed
link is the credential (`baton/api/app.py` lists the path as public). One call each into
`baton/channels/email/answers.py`; the answers are HTML pages, never JSON."""

from __future__ import annotations

from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from baton.api import deps
from baton.channels.email.pages import Page

router = APIGatewayRouter()
MAX_FORM_BYTES = 64 * 1024


def _html(page: Page) -> Response[str]:
    return Response(status_code=page.status, body=page.html(), headers=dict(page.headers))


@router.get("/answer/<link>", include_in_schema=False)
def show(link: str) -> Response[str]:
    return _html(deps.get_services().email_answers_service().view(link))


@router.post("/answer/<link>", include_in_schema=False)
def answer(link: str) -> Response[str]:
    event = router.current_event
    body = event.decoded_body or ""
    if len(body) > MAX_FORM_BYTES:
        return _html(Page(413, "Too long", [f"The answer is over {MAX_FORM_BYTES} bytes. Nothing was changed."]))
    content_type = (event.headers.get("content-type") or event.headers.get("Content-Type") or "").lower()
    if body and not content_type.startswith("application/x-www-form-urlencoded"):
        return _html(Page(415, "Not a form", ["Answer with the page's own buttons. Nothing was changed."]))
    fields = {name: values[-1] for name, values in parse_qs(body, keep_blank_values=True).items()}
    return _html(deps.get_services().email_answers_service().submit(link, fields))
