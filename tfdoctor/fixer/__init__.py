"""`tfdoctor fix`: the fixer, kept apart from the finders (the checks) as conda's doctor keeps them.

- environment.py: where the environment is, its freeze, a throwaway clone, running one step;
- rollback.py: the record and snapshot written before any change, and `--undo` (a journaled restore);
- ownership.py: one owner at a time, the environment's lock;
- dry_run.py: the installer's own resolver asked, nothing changed;
- flow.py: diagnose, plan, verify on the clone, confirm, apply, diagnose again;
- proven.py: the same for a door that proves in one call and applies in another (the proof named, the lock held);
- detached.py: an apply or undo in a process of its own that outlives its asker and records how it ended.
"""
