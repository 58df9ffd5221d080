"""Pure domain logic of Baton: no AWS clients, no I/O; every rule that the API, SDK and CLI share."""
