"""The operations every door calls: diagnose, explain, plan, verify, apply, undo, scan, post (and compare, list).

Each is one function with a typed request and a typed result, and does its own guarding: the one validation of an
interpreter path, the settings and flags merged once, the environment's lock, the operation's total deadline,
redaction of what it hands back, and progress through a callback. The doors (cli/, api.py, servers/mcp.py,
servers/team/) only adapt: they turn their input into a request, call the operation, and render or send its result.
No door reaches past this package and the report document (report/document.py) into the rooms below.
"""

from tfdoctor.operations.common import CannotRun

__all__ = ["CannotRun"]
