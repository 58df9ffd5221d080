"""Adapters that route an agent framework's tool approvals to Baton (issue 30), one module per framework."""
