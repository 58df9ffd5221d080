"""The HTTP API: one Powertools resolver behind API Gateway (or the local stack's adapter)."""
