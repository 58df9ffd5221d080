"""What a Lambda needs around the domain: settings, wiring of adapters to ports, observability."""
