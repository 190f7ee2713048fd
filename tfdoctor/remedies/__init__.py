"""Shared advice built from facts, above facts/ and collect/, below the checks (house step 2)."""
