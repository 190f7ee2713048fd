"""The README's and docs/architecture.md's check tables are what tools/check_tables.py writes from the checks'
own docstrings and declarations: a check added, renamed or redeclared without its tables fails here."""

from __future__ import annotations

import pytest

from tfdoctor.checking.registry import all_checks
from tools.check_tables import TABLES, rewritten


@pytest.mark.parametrize("table", TABLES, ids=[t.path.name for t in TABLES])
def test_the_check_table_is_written_from_the_checks(table):
    text = table.path.read_text(encoding="utf-8")
    assert rewritten(text, table, all_checks()) == text, "run: python tools/check_tables.py"


def test_every_check_documents_itself():
    """The docstring's first paragraph (the README's summary) and the rest (the docs' full account)."""
    for check in all_checks():
        assert check.summary and check.doc, check.id


def test_a_changed_check_makes_its_tables_stale():
    [table] = [t for t in TABLES if t.path.name == "README.md"]
    checks = all_checks()
    text = table.path.read_text(encoding="utf-8")
    assert rewritten(text, table, checks[1:]) != text
