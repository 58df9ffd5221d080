"""The HTML pages of an answer link: self-contained (no script, no external asset, inline style only),
never cached, never sending a referrer. Every value is escaped."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

# The page's form posts back to its own URL (no `action`), so the link works behind any stage path.
HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
}
_STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}"
    "h1{font-size:1.3rem}.prompt{white-space:pre-wrap;background:#f4f4f4;padding:.75rem;border-radius:6px}"
    "button{font:inherit;margin:.25rem .5rem .25rem 0;padding:.4rem 1rem;cursor:pointer}"
    "textarea{width:100%;min-height:6rem;font:inherit}.meta{color:#555;font-size:.9rem}"
)


@dataclass(frozen=True)
class Page:
    status: int
    title: str
    paragraphs: Sequence[str] = ()  # plain text, escaped when rendered
    prompt: str | None = None
    options: Sequence[str] = ()
    option_values: Sequence[str] = ()  # what each option's button posts (default: its label)
    free_text: bool = False
    text_label: str = "Or write an answer:"
    text_button: str = "Send this answer"
    meta: Sequence[str] = ()
    link: tuple[str, str] | None = None  # (text, url): the inbox item, for what the page cannot offer
    headers: dict[str, str] = field(default_factory=lambda: dict(HEADERS))

    def html(self) -> str:
        parts = [f"<h1>{escape(self.title)}</h1>"]
        if self.prompt is not None:
            parts.append(f'<div class="prompt">{escape(self.prompt)}</div>')
        parts += [f"<p>{escape(text)}</p>" for text in self.paragraphs]
        if self.options:
            values = list(self.option_values) or list(self.options)
            buttons = "".join(
                f'<button type="submit" name="option" value="{escape(value, quote=True)}">{escape(option)}</button>'
                for option, value in zip(self.options, values, strict=True)
            )
            parts.append(f'<form method="post"><p>Answer with:</p>{buttons}</form>')
        if self.free_text:
            parts.append(
                f'<form method="post"><p><label for="text">{escape(self.text_label)}</label></p>'
                '<textarea id="text" name="text" maxlength="16000" required></textarea>'
                f'<p><button type="submit">{escape(self.text_button)}</button></p></form>'
            )
        if self.link is not None:
            text, url = self.link
            parts.append(f'<p><a href="{escape(url, quote=True)}" rel="noreferrer">{escape(text)}</a></p>')
        if self.meta:
            parts.append('<ul class="meta">' + "".join(f"<li>{escape(m)}</li>" for m in self.meta) + "</ul>")
        return (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">'
            f"<title>{escape(self.title)} - Baton</title><style>{_STYLE}</style></head>"
            f"<body>{''.join(parts)}</body></html>"
        )
