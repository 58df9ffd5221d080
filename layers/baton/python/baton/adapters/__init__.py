"""Adapters: the only place boto3 is used."""
