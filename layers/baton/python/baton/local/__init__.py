"""The embedded local stack: moto as AWS, our real handlers dispatched in-process, the HTTP API."""
