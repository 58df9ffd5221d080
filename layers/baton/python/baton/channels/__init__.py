"""Channels where a person answers where the notification lands (email links; each in its own package)."""
