"""The team server's backends: every API test runs on SQLite and on a real PostgreSQL (tests/server_support.py);
and the two reports the tests post."""

from __future__ import annotations

import pytest

from tests.server_support import BROKEN_FIXTURE, HEALTHY_FIXTURE, fixture_report, start_postgres


@pytest.fixture(scope="session")
def healthy():
    return fixture_report(HEALTHY_FIXTURE)


@pytest.fixture(scope="session")
def broken():
    return fixture_report(BROKEN_FIXTURE)


@pytest.fixture(scope="session")
def postgres():
    cluster = start_postgres()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A fresh, empty database of each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'server.sqlite3'}"
    return request.getfixturevalue("postgres").new_database()
