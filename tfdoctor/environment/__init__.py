"""The installer room: which installer an environment has (kinds.py), what its pip can install (pip.py),
and the one speller of every command run in or for an environment (spell.py). The planner takes its
lines from here and the fixer what it executes; neither reads a renderer."""
