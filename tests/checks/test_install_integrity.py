"""Install integrity: the child verifies real files against a real RECORD; the check judges its facts."""

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

from tfdoctor.checks.install_integrity import install_integrity as integrity_check
from tfdoctor.child import source
from tfdoctor.facts import integrity
from tfdoctor.model import Status
from tfdoctor.repairs import Action
from tests.builders import MISSING_LIB, integrity_facts, verified_distribution
from tests.plan_support import as_result, intents, plan_of

PYTHON = "/venv/bin/python"


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


# ---- the check, on constructed facts ----

def planned(found: dict, outcome) -> list[str]:
    return [step.command for step in plan_of(found, [as_result("install-integrity", outcome)]).steps]


def test_a_missing_file_fails_and_reinstalls_exactly_that_distribution():
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB), verified_distribution("numpy", "2.4.6"))
    outcome = integrity_check.run(found)
    assert outcome.status is Status.FAIL
    assert "tensorflow-cpu 2.21.0" in outcome.summary and "libtensorflow_framework.so.2 is missing" in outcome.summary
    assert outcome.remediation.commands == ()
    (repair,) = outcome.remediation.repairs
    assert (repair.action, repair.packages, repair.manager) == (Action.REINSTALL, ("tensorflow-cpu==2.21.0",), None)
    assert repair.reason == ("tensorflow-cpu 2.21.0: tensorflow/libtensorflow_framework.so.2 is missing (RECORD)")
    assert planned(found, outcome) == [f"{PYTHON} -m pip install --force-reinstall --no-deps 'tensorflow-cpu==2.21.0'"]


def test_problems_in_two_distributions_give_one_reinstall_of_both():
    truncated = {"path": "numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "problem": "size",
                 "expected_size": 100, "size": 10}
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB), verified_distribution("numpy", "2.4.6", truncated))
    outcome = integrity_check.run(found)
    assert intents(outcome) == [("reinstall", ("tensorflow-cpu==2.21.0", "numpy==2.4.6"))]
    assert planned(found, outcome) == [
        f"{PYTHON} -m pip install --force-reinstall --no-deps 'tensorflow-cpu==2.21.0' 'numpy==2.4.6'"]
    assert any("numpy 2.4.6" in line for line in outcome.details)



def test_what_conda_installed_conda_reinstalls_and_pip_the_rest():
    # a conda environment where numpy came from conda and TensorFlow from pip (TensorFlow's own advice):
    # pip laying its numpy over conda's would leave conda's record of the package wrong
    truncated = {"path": "numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "problem": "size",
                 "expected_size": 100, "size": 10}
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB), verified_distribution("numpy", "2.4.6", truncated, installer="conda"))
    found["python"].update(conda=True, in_venv=False, prefix="/opt/conda/envs/tf")
    outcome = integrity_check.run(found)
    conda, pip = outcome.remediation.repairs
    assert (conda.packages, conda.manager, conda.prefix) == (("numpy==2.4.6",), "conda", "/opt/conda/envs/tf")
    assert (pip.packages, pip.manager) == (("tensorflow-cpu==2.21.0",), None)
    assert planned(found, outcome) == [
        "conda install -p /opt/conda/envs/tf --force-reinstall --no-deps -y 'numpy=2.4.6'",
        f"{PYTHON} -m pip install --force-reinstall --no-deps 'tensorflow-cpu==2.21.0'"]
    only_conda = integrity_facts(verified_distribution("numpy", "2.4.6", truncated, installer="conda"), verified_distribution("tensorflow-cpu", "2.21.0"))
    only_conda["python"].update(conda=True, prefix="/opt/my envs/tf")
    outcome = integrity_check.run(only_conda)
    assert planned(only_conda, outcome) == ["conda install -p '/opt/my envs/tf' --force-reinstall --no-deps -y 'numpy=2.4.6'"]
    assert "docs.conda.io" in outcome.remediation.url

def test_only_a_missing_console_script_warns():
    script = {"path": "../../../bin/tensorboard", "problem": "missing", "expected_size": 200, "size": None, "outside": True}
    found = integrity_facts(verified_distribution("tensorboard", "2.20.0", script))
    outcome = integrity_check.run(found)
    assert outcome.status is Status.WARN
    assert intents(outcome) == [("reinstall", ("tensorboard==2.20.0",))]
    assert planned(found, outcome) == [f"{PYTHON} -m pip install --force-reinstall --no-deps 'tensorboard==2.20.0'"]


def test_intact_files_pass_and_say_what_was_verified_and_what_not():
    outcome = integrity_check.run(integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", native_files=70, hashed_files=60),
                                      verified_distribution("keras", "3.1.0", record=False, installer="conda"), stopped=True))
    assert outcome.status is Status.PASS
    text = " ".join((outcome.summary, *outcome.details))
    assert "sha256 of 60 of 70 native libraries" in text and "budget stopped the rest" in text
    assert "cannot verify keras 3.1.0: installed by conda (no RECORD)" in text


def test_an_unverifiable_tensorflow_is_said_in_the_summary():
    outcome = integrity_check.run(integrity_facts(verified_distribution("tensorflow", "2.15.0", record=False, metadata="egg-info")))
    assert outcome.status is Status.PASS
    assert outcome.summary.startswith("cannot verify tensorflow (an egg-info install (no RECORD))")


def test_no_family_distribution_skips():
    assert integrity_check.run(integrity_facts()).status is Status.SKIP


def test_a_library_named_in_an_error_is_tied_to_its_missing_file():
    found = integrity_facts(verified_distribution("tensorflow-cpu", "2.21.0", MISSING_LIB))
    problem = integrity.problem_for_library(found, "libtensorflow_framework.so.2")
    assert problem is not None and problem.requirement == "tensorflow-cpu==2.21.0"
    assert integrity.problem_for_library(found, "libcudart.so.12") is None


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


def test_two_builds_sharing_files_fail_without_a_reinstall_that_would_bring_the_clash_back():
    clash = {**MISSING_LIB, "problem": "size", "size": 1, "also_in": ["tensorflow"]}
    truncated = {"path": "numpy/__init__.py", "problem": "size", "expected_size": 100, "size": 10}
    found = integrity_facts(verified_distribution("tensorflow", "2.21.0"), verified_distribution("tensorflow-cpu", "2.21.0", clash), verified_distribution("numpy", "2.4.6", truncated))
    outcome = integrity_check.run(found)
    assert outcome.status is Status.FAIL
    # the damage with a repair comes first; the clash is named in the details
    assert intents(outcome) == [("reinstall", ("numpy==2.4.6",))]
    assert any("tensorflow, tensorflow-cpu install the same files" in line for line in outcome.details)
    alone_facts = integrity_facts(verified_distribution("tensorflow", "2.21.0"), verified_distribution("tensorflow-cpu", "2.21.0", clash))
    alone = integrity_check.run(alone_facts)
    assert alone.status is Status.FAIL and alone.summary.startswith("tensorflow, tensorflow-cpu install the same files")
    # uninstall both, install one: the one tensorflow-install keeps (the newest, as `tensorflow` on Linux x86-64)
    assert alone.remediation.commands == () and "tensorflow-install" in alone.remediation.advice
    assert intents(alone) == [("uninstall", ("tensorflow", "tensorflow-cpu")), ("install", ("tensorflow==2.21.0",))]
    assert not any(r.action is Action.REINSTALL for r in alone.remediation.repairs)
    plan = plan_of(alone_facts, [as_result("install-integrity", alone)])
    assert [step.command for step in plan.steps] == [f"{PYTHON} -m pip uninstall -y tensorflow tensorflow-cpu",
                                                     f"{PYTHON} -m pip install 'tensorflow==2.21.0'"]
    assert not plan.conflicts


def test_a_clash_is_repaired_as_tensorflow_install_repairs_the_same_two_builds():
    """Both checks see tensorflow and tensorflow-cpu in one site-packages/tensorflow/: they ask for the same
    uninstall and the same build kept, so the plan has one uninstall and one install."""
    from tests.plan_support import results_of

    clash = {**MISSING_LIB, "problem": "size", "size": 1, "also_in": ["tensorflow-cpu"]}
    found = integrity_facts(verified_distribution("tensorflow", "2.20.0", clash), verified_distribution("tensorflow-cpu", "2.21.0"))
    found["python"]["version"] = "3.11.7"
    found["distributions"] = [{"name": "tensorflow-cpu", "version": "2.21.0", "top_level": ["tensorflow"]},
                              {"name": "tensorflow", "version": "2.20.0", "top_level": ["tensorflow"]}]
    results = results_of(found, "tensorflow-install", "install-integrity")
    assert [r.status for r in results] == [Status.FAIL, Status.FAIL]
    assert intents(results[0])[1:] == intents(results[1])[1:] == [("install", ("tensorflow==2.21.0",))]
    plan = plan_of(found, results)
    assert [step.command for step in plan.steps] == [f"{PYTHON} -m pip uninstall -y tensorflow tensorflow-cpu",
                                                     f"{PYTHON} -m pip install 'tensorflow==2.21.0'"]
    assert plan.steps_for("tensorflow-install") == plan.steps_for("install-integrity") == [1, 2]
    # the installed build (tensorflow-cpu, first on the path) is replaced: the plan says so, and why
    move = plan.moves_tensorflow
    assert (move.source, move.target) == ("tensorflow-cpu==2.21.0", "tensorflow==2.21.0")
    assert "two real TensorFlow builds" in move.why and "install the same files" in move.why


def test_a_clash_of_other_distributions_keeps_the_one_installed_last():
    """keras-nightly's files overwrote keras's (keras's RECORD no longer matches): keras-nightly stays."""
    shared = {"path": "keras/__init__.py", "problem": "hash", "also_in": ["keras-nightly"]}
    found = integrity_facts(verified_distribution("keras", "3.12.0", shared), verified_distribution("keras-nightly", "3.13.0.dev2025110103"))
    outcome = integrity_check.run(found)
    assert intents(outcome) == [("uninstall", ("keras", "keras-nightly")), ("install", ("keras-nightly==3.13.0.dev2025110103",))]


def test_the_collector_verifies_only_when_a_selected_check_needs_it():
    from tfdoctor.collect.integrity import collect_integrity
    from tfdoctor.collect.options import CollectOptions

    both = collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity"})), budget_s=0.0)
    assert set(both) == {"integrity", "installers"} and both["installers"]["pip"]
    assert collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"installers"}))).keys() == {"installers"}


def test_hashing_gets_less_time_when_no_tensorflow_child_runs_beside_it():
    """Without the TensorFlow child the integrity child is the run's critical path: a shorter budget,
    recorded in the facts (the check names it when it stopped the hashing)."""
    from tfdoctor.collect.integrity import HASH_BUDGET_ALONE_S, HASH_BUDGET_S, collect_integrity
    from tfdoctor.collect.options import CollectOptions

    alone = collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity"})))
    beside = collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity", "tensorflow"})))
    assert HASH_BUDGET_ALONE_S < HASH_BUDGET_S
    assert alone["integrity"]["budget_s"] == HASH_BUDGET_ALONE_S
    assert beside["integrity"]["budget_s"] == HASH_BUDGET_S


def test_the_child_is_niced_only_beside_the_tensorflow_import(monkeypatch):
    import tfdoctor.collect.integrity as collector
    from tfdoctor.collect.options import CollectOptions

    arguments: list[dict] = []

    def run_command(argv, timeout):
        arguments.append(json.loads(argv[-1]))
        return {"status": "ok", "exit_code": 0, "stdout": json.dumps({"installers": {}}), "stderr": ""}

    monkeypatch.setattr(collector, "run_command", run_command)
    collector.collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity", "tensorflow"})))
    collector.collect_integrity(CollectOptions(python=sys.executable, sections=frozenset({"integrity"})))
    assert [a["nice"] for a in arguments] == [True, False]


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
