"""What a workflow is made of: the table, the deployed resources, the ASL rules and gate states."""
