"""The Linux knowledge tables (CUDA, drivers, kernels) agree with each other, and the specifier helper they use."""

from __future__ import annotations

import pytest

from tfdoctor import knowledge
from tfdoctor.checks.cuda_build import and_cuda_requirements
from tfdoctor.knowledge.specifiers import satisfies

from tests.builders import tensorflow_distribution


@pytest.mark.parametrize("version, spec, expected", [
    ("9.1.0.70", "==9.3.0.75", False), ("9.3.0.75", "<10.0,>=9.3.0.75", True), ("10.0.1", "<10.0,>=9.3.0.75", False),
    ("2.16.2", "==2.16.*", True), ("2.17.0", "~=2.16.0", False), (None, ">=1", None),
])
def test_satisfies(version, spec, expected):
    assert satisfies(version, spec) is expected


def test_knowledge_tables_are_consistent():
    from tfdoctor.facts.releases import minor_rows

    releases = minor_rows()  # the generated release table (tfdoctor/facts/releases.py)
    assert [r["tf"] for r in releases] == sorted((r["tf"] for r in releases), key=lambda v: tuple(map(int, v.split("."))))
    assert {r["tf"] for r in knowledge.rows("linux", "tf_cuda")} == {r["tf"] for r in releases}
    for row in knowledge.rows("linux", "tf_cuda"):
        keys = [tuple(map(int, s.split("."))) for s in row["sass"]]
        assert keys == sorted(keys) and row["ptx"] in row["sass"]
    for row in knowledge.rows("linux", "and_cuda"):
        for requirement in row["requires"]:
            assert and_cuda_requirements({"distributions": [tensorflow_distribution(row["tf_versions"][0],
                                                               requires=[f'{requirement}; extra == "and-cuda"'])]})
    for table, rows in knowledge.load("linux").items():
        for row in rows:
            assert row.get("source") and isinstance(row.get("verified"), bool), (table, row)
