"""The tests' shared builders (issue 21): written once in tests/builders.py and offered here, so that
`from tests.conftest import ...` and `from tests.builders import ...` name the same functions; no test
module declares them again (tests/project/test_layout.py)."""

from tests.builders import *  # noqa: F401,F403 - the builders, re-exported
