"""The one shared Powertools logger, tracer and metrics of every Baton function."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger(service="baton")
tracer = Tracer(service="baton")
metrics = Metrics(namespace="Baton", service="baton")
