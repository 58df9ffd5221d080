"""Where people answer outside the API and the inbox, where the notification lands: email links
(`email/`) and the Slack app (`slack/`), each in its own package."""
