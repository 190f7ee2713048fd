"""The check registry and the runner that runs checks on facts, a crash being a result."""
