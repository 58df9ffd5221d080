"""Adapters from agent frameworks' human-in-the-loop pauses to Baton's tool approvals. Each imports its
framework, an optional extra (`baton[langgraph]`): the SDK, the CLI and the Lambdas never import them."""
