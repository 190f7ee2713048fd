"""The tests' shared builders (issue 21): written once in tests/builders.py and offered here, so that
`from tests.conftest import ...` and `from tests.builders import ...` name the same functions; no test
module declares them again (tests/test_layout.py)."""

from tests.builders import (  # noqa: F401 - re-exported
    CPU,
    GPU,
    LINUX,
    MAC_SITE,
    MAC_USER_SITE,
    MAC_VENV,
    distribution,
    fix_text,
    fixture_facts,
    host,
    linux,
    mac,
    run,
    site_distribution,
    tensorflow_distribution,
    tensorflow_result,
)
