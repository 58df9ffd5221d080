"""Slack: the app's messages, its interaction endpoint and the worker that answers after the ack."""
