"""Built-in connectors."""
