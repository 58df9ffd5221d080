"""The `baton` command line, one module per command group (see `baton.cli.main`)."""
