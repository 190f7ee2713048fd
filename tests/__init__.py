"""The test suite. Every check in it reads the facts through the view of its declared sections, and a read
of any other section fails it (tfdoctor/checking/view.py). Switched on here, where every test module and
tests/conftest.py are imported from, before any test runs, so the CLI's children that tests start inherit it
too; TFDOCTOR_STRICT_FACTS=0 in the environment turns it off, to compare with the unchecked reads of a user's run."""

import os

from tfdoctor.checking.view import STRICT_ENVIRONMENT_VARIABLE

os.environ.setdefault(STRICT_ENVIRONMENT_VARIABLE, "1")

# A test run writes nothing into the user's own cache or config (rollback records, locks, the libraries' read
# imports, a config the user keeps there would change what a test sees): each test process gets its own, removed at
# its exit. Children the tests start inherit it. The Mermaid parser's npm install stays in the real cache, where it is
# reused across runs (tests/mermaid_support.py reads TFDOCTOR_TEST_CACHE).
if "TFDOCTOR_TESTS_OWN_HOME" not in os.environ:
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    _real_cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    os.environ.setdefault("TFDOCTOR_TEST_CACHE", str(Path(_real_cache) / "tfdoctor-tests"))
    _own = tempfile.mkdtemp(prefix="tfdoctor-tests-xdg-")
    os.environ["TFDOCTOR_TESTS_OWN_HOME"] = _own
    os.environ["XDG_CACHE_HOME"] = os.path.join(_own, "cache")
    os.environ["XDG_CONFIG_HOME"] = os.path.join(_own, "config")
    atexit.register(shutil.rmtree, _own, ignore_errors=True)
