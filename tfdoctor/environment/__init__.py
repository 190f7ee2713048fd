"""The installer room: the installers, one module each registered in one tuple (installers/: which installer
an environment has, how its commands differ, what `fix` may do with it), what the target's pip can install
(pip.py), and the one speller of every command run in or for an environment (spell.py), which asks the
installer what differs. The planner takes its lines from here and the fixer what it executes; neither reads
a renderer."""
