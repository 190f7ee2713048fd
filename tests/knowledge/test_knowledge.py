"""Every row of every knowledge file says where it comes from (a public URL, never a local path) and
whether that was verified; the macOS file's rows are internally consistent; the curated tables agree with
the release table generated from PyPI, and every release they name exists in it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.fixtures_support import fixture_id, fixture_paths, load_fixture
from tfdoctor import knowledge
from tfdoctor.facts import releases
from tfdoctor.facts import installable_wheels, tensorflow_distributions, tensorflow_pins
from tfdoctor.knowledge.specifiers import satisfies
from tfdoctor.knowledge.versions import release
from tfdoctor.knowledge import rows as knowledge_rows

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
    versions = [release(row["version"]) for row in knowledge_rows("macos", "metal_release")]
    assert versions == sorted(versions) and all(versions)
    for row in knowledge_rows("macos", "metal_release"):
        assert release(row["python_min"]) <= release(row["python_max"])
        assert release(row["macos_min"]) >= (12, 0)


def test_metal_tf_rows_have_ordered_ranges_and_known_outcomes():
    for row in knowledge_rows("macos", "metal_tf"):
        assert release(row["metal_min"]) <= release(row["metal_max"])
        assert release(row["tf_min"]) <= release(row["tf_max"])
        assert row["outcome"] in {"loads", "loads_untested", "training_fails", "crashes_in_use", "import_fails"}
        if row["outcome"] == "import_fails" and row["verified"]:
            assert row["error"], "a verified import failure quotes its error"


def test_wheel_rows_are_consistent():
    names = set(tensorflow_distributions.tensorflow_distribution_names())
    ranges = [row for row in installable_wheels.wheel_rows(None) if row["distribution"] != "tensorflow-metal"]
    assert len(ranges) > 100
    for row in ranges:
        assert set(row["platform"].split()) <= PLATFORMS
        assert set(row["distribution"].split()) <= names
        assert release(row["version_min"]) <= release(row["newest"])[:3] <= release(row["version_max"])
        assert release(row["python_min"]) <= release(row["python_max"])
        assert row["kind"] in ("real", "shim")
        assert (row["kind"] == "shim") == bool(row["shim_of"])
        if row["shim_of"]:
            assert row["shim_of"] in names


def test_pin_specs_parse():
    for row in knowledge_rows("macos", "tensorflow_pin"):
        assert satisfies("1.0.0", row["spec"]) is not None, row


def test_memory_thresholds_are_ordered():
    value = {row["name"]: row["value"] for row in knowledge_rows("macos", "memory_threshold")}
    assert value["swap_used_of_ram_warn"] < value["swap_used_of_ram_fail"]
    assert value["available_of_ram_fail"] < value["available_of_ram_warn"]


# --- every source is public -------------------------------------------------------------------


# a file of the workspace's reference folder: nobody else has it (cite the public URL it gives instead)
REFERENCE_FOLDER = (r"shared/reference|\[local\]"
                    r"|\b(compat-matrix|linux-matrix|linux-outputs|mac-system-outputs|probe-method|doctor-anchors)\.md"
                    r"|\b(real-cases|linux-cases)\.json")
# ... or a folder of this workspace, or an absolute path: a source must be a public URL
LOCAL = re.compile(REFERENCE_FOLDER + r"|(^|[\s(;,])/(work|home|tmp|root)/|(^|[\s(;,])fs:")


def test_the_local_pattern_catches_what_it_must():
    for text in ("compat-matrix.md §1", "/work/shared/reference/x.md", "linux-outputs.md [local] 4a", "fs:123",
                 "https://x.org (see probe-method.md §6.3)"):
        assert LOCAL.search(text), text
    assert not LOCAL.search("https://github.com/tensorflow/tensorflow/blob/v2.18.0/tensorflow/api_template.__init__.py")


@pytest.mark.parametrize("where, row", ROWS, ids=[w for w, _ in ROWS])
def test_every_row_cites_a_public_url_and_no_local_path(where, row):
    assert "https://" in row["source"], f"{where}: {row['source']}"
    assert not LOCAL.search(row["source"]), f"{where}: {row['source']}"


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_every_fixture_cites_a_public_url_and_no_local_path(path):
    sources = load_fixture(path)["fixture"].get("sources") or []
    assert any("https://" in s for s in sources), sources
    assert not [s for s in sources if LOCAL.search(s)]


REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("checks", "tfdoctor", "tests", "tools", "bench", "fixtures", "docs")


def _source_files():
    for folder in SOURCE_FOLDERS:
        for path in sorted((REPOSITORY / folder).rglob("*")):
            if path.is_file() and path.suffix in {".py", ".toml", ".json", ".md", ".txt", ".sh"}:
                yield path
    yield REPOSITORY / "README.md"


def test_no_code_comment_or_fixture_note_cites_the_reference_folder():
    """Comments, docstrings, test labels and fixture descriptions cite public URLs, never the workspace's
    reference files (this file names them only to forbid them)."""
    pattern = re.compile(REFERENCE_FOLDER)
    offenders = [f"{path.relative_to(REPOSITORY)}:{number}: {line.strip()[:100]}"
                 for path in _source_files() if path != Path(__file__).resolve()
                 for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
                 if pattern.search(line)]
    assert not offenders, offenders


# --- the generated release table and the curated tables agree -------------------------------------

def _py(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _generated(distribution, version, platform):
    return next((w for w in releases.wheels() if (w["distribution"], w["version"], w["platform"])
                 == (distribution, version, platform)), None)


def test_the_release_table_is_generated_and_readable():
    rows = releases.wheels()
    assert len(rows) > 400
    for row in rows:
        assert row["pythons"] and row["platform"] in PLATFORMS
        assert row["kind"] in ("real", "shim") and (row["kind"] == "shim") <= bool(row["shim_of"])
        assert row["source"].startswith("https://pypi.org/project/")
    assert releases.minor_rows()[-1]["tf"] >= "2.21"


@pytest.mark.parametrize("row", knowledge_rows("macos", "metal_release"), ids=lambda r: r["version"])
def test_curated_metal_releases_agree_with_pypi(row):
    arm = _generated("tensorflow-metal", row["version"], "macos-arm64")
    x86 = _generated("tensorflow-metal", row["version"], "macos-x86_64")
    assert arm, f"tensorflow-metal {row['version']} has no arm64 wheel on PyPI"
    pythons = sorted(arm["pythons"], key=_py)
    assert (pythons[0], pythons[-1]) == (row["python_min"], row["python_max"])
    assert (max(x86["pythons"], key=_py) if x86 else "") == row["x86_64_python_max"]


def test_every_release_the_knowledge_names_exists():
    named = set()
    for row in knowledge_rows("macos", "metal_tf") + knowledge_rows("macos", "tensorflow_pin") + knowledge_rows("macos", "numpy_abi"):
        for bound in (row["tf_min"], row["tf_max"]):
            if not bound.startswith("2.99") and _py(bound) >= (2, 4):
                named.add(("tensorflow", bound))
    for row in knowledge_rows("macos", "metal_tf"):
        named.update({("tensorflow-metal", row["metal_min"]), ("tensorflow-metal", row["metal_max"])})
    for row in knowledge.rows("linux", "tf_cuda"):
        named.add(("tensorflow", row["tf"]))
    for row in knowledge.rows("linux", "and_cuda"):
        named.update(("tensorflow", v) for v in row["tf_versions"])
    missing = sorted(n for n in named if not (releases.release_exists(*n) or releases.release_exists("tensorflow-macos", n[1])))
    assert not missing


def test_curated_and_cuda_pins_agree_with_pypi():
    for row in knowledge.rows("linux", "and_cuda"):
        for version in row["tf_versions"]:
            wheel = _generated("tensorflow", version, "linux-x86_64")
            assert wheel, version
            got = {Requirement(r).name.lower(): SpecifierSet(str(Requirement(r).specifier)) for r in wheel["and_cuda"]}
            want = {Requirement(r).name.lower(): SpecifierSet(str(Requirement(r).specifier)) for r in row["requires"]}
            assert got == want, version


def test_curated_numpy_and_keras_pins_agree_with_pypi():
    checked = 0
    for wheel in releases.wheels():
        if wheel["distribution"] not in ("tensorflow", "tensorflow-macos") or wheel["kind"] != "real" or wheel["prerelease"]:
            continue
        for package in ("numpy", "keras"):
            row = tensorflow_pins.pin(package, wheel["version"])
            declared = [str(Requirement(p).specifier) for p in wheel["pins"]
                        if Requirement(p).name.lower() == package and not Requirement(p).marker]
            if row and declared:
                assert SpecifierSet(declared[0]) == SpecifierSet(row["spec"]), (wheel["version"], package, declared)
                checked += 1
    assert checked > 100


def test_preload_parses_every_table_but_the_on_demand_ones(monkeypatch):
    """Run while the children work: the checks then find their tables parsed; companions.toml (194 KiB)
    stays unread until a companion is involved."""
    from tfdoctor import knowledge

    parsed: list[str] = []
    monkeypatch.setattr(knowledge, "load", lambda name: parsed.append(name))
    knowledge.preload()
    assert "companions" in knowledge.ON_DEMAND and "companions" not in parsed
    assert sorted(parsed) == sorted(set(knowledge.names()) - knowledge.ON_DEMAND) and "releases" in parsed
