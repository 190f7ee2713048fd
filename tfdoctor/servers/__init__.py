"""Servers: optional extras ([mcp], [server]); the plain CLI never imports this package."""
