"""Web Push, a channel (issue 32, item 3): an operator's subscriptions (`subscriptions.py`), the push to
their devices when an item is escalated or assigned to them (`sender.py`, over `web_push.py`: the VAPID keys
and the encrypted POST), and a notification's one-tap answer (`answers.py`). Nothing is imported here:
`baton/runtime/wiring.py` imports each module on first use, as a cold start's pins ask."""
