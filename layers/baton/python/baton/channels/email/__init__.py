"""Scanner-safe email links: per-recipient mail whose signed, single-use links open a confirmation page
(GET changes nothing) whose form answers once (POST). `links.py` signs and checks a link, `mail.py`
composes and sends one mail per recipient, `answers.py` serves the pages, `pages.py` renders them."""
