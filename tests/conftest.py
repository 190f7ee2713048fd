"""The tests' shared builders (issue 21): written once in tests/builders.py and offered here, so that
`from tests.conftest import ...` and `from tests.builders import ...` name the same functions; no test
module declares them again (tests/project/test_layout.py).

Every check in the tests reads the facts through the view of its declared sections, and an undeclared read
fails it (tfdoctor/checking/view.py): set here, before any test runs, so the CLI's children inherit it too."""

import os

from tfdoctor.checking.view import STRICT_ENVIRONMENT_VARIABLE

os.environ.setdefault(STRICT_ENVIRONMENT_VARIABLE, "1")  # "0" turns it off, to compare with unchecked reads

from tests.builders import *  # noqa: E402,F401,F403 - the builders, re-exported
