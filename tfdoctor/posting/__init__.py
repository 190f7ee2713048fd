"""Posting reports to a team server: the careful HTTP client and the reports kept to send again."""
