"""The tests' shared builders (issue 21): written once in tests/builders.py and offered here, so that
`from tests.conftest import ...` and `from tests.builders import ...` name the same functions; no test
module declares them again (tests/project/test_layout.py)."""

from tests.builders import *  # noqa: F401,F403 - the builders, re-exported

import pytest


@pytest.fixture(autouse=True)
def _children_registry_open():
    """A test that interrupts the doctor in this process closes the process-wide children registry; the
    next test in the same worker starts with it open again, whatever order xdist gives them."""
    yield
    from tfdoctor.processes.commands import CHILDREN

    CHILDREN.reopen()
