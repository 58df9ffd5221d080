"""Where people answer outside the API and the inbox, where the notification lands: email links
(`email/`), the Slack app (`slack/`) and Web Push (`push/`: the subscriptions, the push and its one tap),
each through the API's own answer for the kind (`answering.py`)."""
