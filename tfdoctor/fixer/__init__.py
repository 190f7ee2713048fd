"""`tfdoctor fix`: the fixer, kept apart from the finders (the checks) as conda's doctor keeps them.

- environment.py: where the environment is, its freeze, a throwaway clone, running one step;
- rollback.py: the record and snapshot written before any change, and `--undo` (a journaled restore);
- ownership.py: one owner at a time, the environment's lock;
- dry_run.py: the installer's own resolver asked, nothing changed;
- flow.py: diagnose, plan, verify on the clone, confirm, apply, diagnose again.
"""
