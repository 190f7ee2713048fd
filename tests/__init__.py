"""The test suite. Every check in it reads the facts through the view of its declared sections, and a read
of any other section fails it (tfdoctor/checking/view.py). Switched on here, where every test module and
tests/conftest.py are imported from, before any test runs, so the CLI's children that tests start inherit it
too; TFDOCTOR_STRICT_FACTS=0 in the environment turns it off, to compare with the unchecked reads of a user's run."""

import os

from tfdoctor.checking.view import STRICT_ENVIRONMENT_VARIABLE

os.environ.setdefault(STRICT_ENVIRONMENT_VARIABLE, "1")
