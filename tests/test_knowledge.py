"""Every row of every knowledge file says where it comes from and whether that was verified; the macOS
file's rows are internally consistent (ranges ordered, versions readable, shims name their target)."""

from __future__ import annotations

import pytest

from tfdoctor import knowledge
from tfdoctor.facts import macos_knowledge as mk
from tfdoctor.specifiers import satisfies
from tfdoctor.versions import release

FILES = knowledge.names()


def all_rows():
    for name in FILES:
        for table, value in knowledge.load(name).items():
            if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
                for index, row in enumerate(value):
                    yield f"{name}.{table}[{index}]", row


ROWS = list(all_rows())


def test_knowledge_files_exist():
    assert "macos" in FILES
    assert ROWS


@pytest.mark.parametrize("where, row", ROWS, ids=[w for w, _ in ROWS])
def test_every_row_has_a_source_and_verified(where, row):
    assert isinstance(row.get("source"), str) and row["source"].strip(), f"{where} has no source"
    assert isinstance(row.get("verified"), bool), f"{where} has no boolean verified"


PLATFORMS = {"macos-arm64", "macos-x86_64", "linux-x86_64", "linux-aarch64", "windows-x86_64"}


def test_metal_releases_are_ordered_and_readable():
    versions = [release(row["version"]) for row in mk.rows("metal_release")]
    assert versions == sorted(versions) and all(versions)
    for row in mk.rows("metal_release"):
        assert release(row["python_min"]) <= release(row["python_max"])
        assert release(row["macos_min"]) >= (12, 0)


def test_metal_tf_rows_have_ordered_ranges_and_known_outcomes():
    for row in mk.rows("metal_tf"):
        assert release(row["metal_min"]) <= release(row["metal_max"])
        assert release(row["tf_min"]) <= release(row["tf_max"])
        assert row["outcome"] in {"loads", "loads_untested", "training_fails", "crashes_in_use", "import_fails"}
        if row["outcome"] == "import_fails" and row["verified"]:
            assert row["error"], "a verified import failure quotes its error"


def test_wheel_rows_are_consistent():
    names = set(mk.tensorflow_distribution_names())
    for row in mk.rows("tensorflow_wheel"):
        assert set(row["platform"].split()) <= PLATFORMS
        assert set(row["distribution"].split()) <= names
        assert release(row["version_min"]) <= release(row["newest"])[:3] <= release(row["version_max"])
        assert release(row["python_min"]) <= release(row["python_max"])
        assert row["kind"] in ("real", "shim")
        assert (row["kind"] == "shim") == bool(row["shim_of"])
        if row["shim_of"]:
            assert row["shim_of"] in names


def test_pin_specs_parse():
    for row in mk.rows("tensorflow_pin"):
        assert satisfies("1.0.0", row["spec"]) is not None, row


def test_memory_thresholds_are_ordered():
    value = {row["name"]: row["value"] for row in mk.rows("memory_threshold")}
    assert value["swap_used_of_ram_warn"] < value["swap_used_of_ram_fail"]
    assert value["available_of_ram_fail"] < value["available_of_ram_warn"]
