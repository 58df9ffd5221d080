"""Where people answer outside the API and the inbox: chat apps (Slack)."""
