"""The operations behind the commands: they return data and never print."""
