"""Where people answer outside the API and the inbox, where the notification lands: email links
(`email/`), the Slack app (`slack/`) and a push notification's one tap (`push_answers.py`), each through
the API's own answer for the kind (`answering.py`)."""
