"""The integrity child (tfdoctor/child/integrity.py) on real files against a real RECORD: intact, deleted,
truncated, altered, a spent budget, files outside site-packages, no RECORD, two distributions writing the same
file, the installers it finds. The install-integrity check on such facts is tests/checks/test_install_integrity.py."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.child import source


def record_line(root: Path, relative: str) -> str:
    data = (root / relative).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")
    return f"{relative},sha256={digest},{len(data)}"


def make_distribution(site: Path, name: str = "tensorflow-tiny", version: str = "1.0") -> Path:
    """A wheel-installed distribution as pip leaves it: package files, a native library, a console
    script outside site-packages, bytecode and RECORD itself listed without hash or size."""
    package = site / "tftiny"
    (package / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text("VALUE = 1\n")
    (package / "_native.so").write_bytes(os.urandom(4096))
    (package / "libsmall.so.2").write_bytes(os.urandom(1024))
    (package / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\x00" * 16)
    scripts = site.parent / "bin"
    scripts.mkdir(exist_ok=True)
    (scripts / "tftiny-cli").write_text("#!/bin/sh\n")
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                   "Requires-Python: >=3.9\n\nbody\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_27_x86_64\n")
    (info / "INSTALLER").write_text("pip\n")
    rows = [record_line(site, f"tftiny/{f}") for f in ("__init__.py", "_native.so", "libsmall.so.2")]
    rows += [record_line(site, f"{info.name}/{f}") for f in ("METADATA", "WHEEL", "INSTALLER")]
    rows.append(record_line(site, "../bin/tftiny-cli").replace("../bin", "../bin", 1))
    rows.append("tftiny/__pycache__/__init__.cpython-311.pyc,,")
    rows.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return info


def run_child(site: Path, budget_s: float = 5.0, verify: bool = True) -> dict:
    """The child in a fresh interpreter that sees only `site` (no site-packages, no cwd entry)."""
    completed = subprocess.run(
        [sys.executable, "-S", "-c", source("integrity"), json.dumps({"budget_s": budget_s, "verify": verify})],
        cwd=site.parent, env={"PYTHONPATH": str(site), "PATH": os.environ.get("PATH", "")},
        capture_output=True, text=True, timeout=60, check=True)
    return json.loads(completed.stdout)


def entry(found: dict, name: str = "tensorflow-tiny") -> dict:
    return next(d for d in found["integrity"]["distributions"] if d["name"] == name)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    path = tmp_path / "site-packages"
    path.mkdir()
    make_distribution(path)
    return path


def test_an_intact_install_verifies_with_counts(site):
    tiny = entry(run_child(site))
    assert tiny["record"] is True and tiny["problems"] == [] and tiny["problems_total"] == 0
    assert tiny["listed"] == 9
    assert tiny["size_checked"] == 7  # three package files, three metadata files, the script
    assert tiny["unverifiable"] == 2  # the .pyc and RECORD itself
    assert tiny["outside"] == 1
    assert (tiny["native_files"], tiny["hashed_files"], tiny["hashed_bytes"]) == (2, 2, 5120)


def test_a_deleted_file_is_missing(site):
    (site / "tftiny" / "__init__.py").unlink()
    tiny = entry(run_child(site))
    assert tiny["problems"] == [{"path": "tftiny/__init__.py", "problem": "missing", "expected_size": 10, "size": None}]


def test_a_truncated_file_has_the_wrong_size(site):
    library = site / "tftiny" / "_native.so"
    library.write_bytes(library.read_bytes()[:100])
    tiny = entry(run_child(site))
    assert tiny["problems"] == [{"path": "tftiny/_native.so", "problem": "size", "expected_size": 4096, "size": 100}]


def test_an_altered_native_library_of_the_same_size_fails_its_hash(site):
    library = site / "tftiny" / "libsmall.so.2"
    library.write_bytes(bytes(1024))
    tiny = entry(run_child(site))
    assert [(p["path"], p["problem"]) for p in tiny["problems"]] == [("tftiny/libsmall.so.2", "hash")]


def test_a_spent_budget_stops_hashing_and_says_so(site):
    (site / "tftiny" / "libsmall.so.2").write_bytes(bytes(1024))  # altered, but never hashed
    found = run_child(site, budget_s=0.0)
    tiny = entry(found)
    assert found["integrity"]["hash_stopped"] is True
    assert tiny["hashed_files"] == 0 and tiny["native_files"] == 2 and tiny["problems"] == []


def test_a_missing_script_outside_site_packages_is_marked_outside(site):
    (site.parent / "bin" / "tftiny-cli").unlink()
    tiny = entry(run_child(site))
    assert tiny["problems"] == [{"path": "../bin/tftiny-cli", "problem": "missing", "expected_size": 10,
                                 "size": None, "outside": True}]


def test_no_record_and_egg_info_cannot_be_verified(site):
    conda = site / "tensorflow_conda-2.0.dist-info"
    conda.mkdir()
    (conda / "METADATA").write_text("Name: tensorflow-conda\nVersion: 2.0\n\n")
    (conda / "INSTALLER").write_text("conda\n")
    (site / "keras_old-1.0-py3.9.egg-info").write_text("Metadata-Version: 1.0\nName: keras-old\nVersion: 1.0\n\n")
    found = run_child(site)
    assert (entry(found, "tensorflow-conda")["record"], entry(found, "tensorflow-conda")["installer"]) == (False, "conda")
    assert (entry(found, "keras-old")["record"], entry(found, "keras-old")["metadata"]) == (False, "egg-info")


def test_installer_facts_and_wheel_tags_without_verification(site):
    found = run_child(site, verify=False)
    assert "integrity" not in found
    assert found["installers"]["pip"] is None  # no pip on this bare path
    assert found["installers"]["wheels"] == [{"name": "tensorflow-tiny", "version": "1.0",
                                              "tags": ["cp311-cp311-manylinux_2_27_x86_64"], "requires_python": ">=3.9"}]


def test_a_real_copy_of_an_installed_distribution(tmp_path):
    """ml-dtypes as pip installed it (a native extension among Python files), copied, then damaged."""
    from importlib import metadata

    dist = metadata.distribution("ml_dtypes")
    origin = Path(str(dist.locate_file("")))
    site = tmp_path / "site-packages"
    site.mkdir()
    info = next(p for p in origin.glob("ml_dtypes-*.dist-info"))
    shutil.copytree(info, site / info.name)
    shutil.copytree(origin / "ml_dtypes", site / "ml_dtypes")
    clean = entry(run_child(site), "ml-dtypes")
    assert clean["record"] and clean["problems_total"] == 0 and clean["native_files"] >= 1
    assert clean["hashed_files"] == clean["native_files"]
    library = next((site / "ml_dtypes").glob("*.so"))
    library.write_bytes(library.read_bytes()[:-1])
    (site / "ml_dtypes" / "__init__.py").unlink()
    damaged = entry(run_child(site), "ml-dtypes")
    assert {(p["path"], p["problem"]) for p in damaged["problems"]} == {
        ("ml_dtypes/__init__.py", "missing"), (f"ml_dtypes/{library.name}", "size")}


def test_a_file_two_distributions_install_is_marked_with_the_other_owner(site):
    """A second build writing the same package (tensorflow over tensorflow-cpu): the file now matches
    the other RECORD, so the first one's check sees it altered, and names who else installed it."""
    other = make_distribution_copy(site, "tensorflow-other")
    (site / "tftiny" / "_native.so").write_bytes(os.urandom(2048))
    rows = [record_line(site, "tftiny/_native.so"), f"{other.name}/RECORD,,"]
    (other / "RECORD").write_text("\n".join(rows) + "\n")
    found = run_child(site)
    assert entry(found)["problems"] == [{"path": "tftiny/_native.so", "problem": "size", "expected_size": 4096,
                                         "size": 2048, "also_in": ["tensorflow-other"]}]
    assert entry(found, "tensorflow-other")["problems"] == []


def make_distribution_copy(site: Path, name: str) -> Path:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n")
    return info


def test_conda_version_from_the_environments_own_history(tmp_path):
    """conda writes '# conda version: X' into conda-meta/history at each change of the environment."""
    import venv

    prefix = tmp_path / "env"
    venv.create(prefix, with_pip=False)
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "history").write_text(
        "==> 2024-01-02 10:00:00 <==\n# cmd: conda create -n tf python=3.11\n# conda version: 23.7.4\n"
        "==> 2024-03-04 10:00:00 <==\n# cmd: conda install numpy\n# conda version: 24.1.2\n")
    python = prefix / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    completed = subprocess.run([str(python), "-c", source("integrity"), json.dumps({"verify": False})],
                               capture_output=True, text=True, timeout=60, check=True)
    installers = json.loads(completed.stdout)["installers"]
    assert installers["conda"] == "24.1.2" and installers["pip"] is None
