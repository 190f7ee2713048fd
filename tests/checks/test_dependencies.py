"""The dependencies check and its reader (tfdoctor/facts/requires_dist.py) on constructed facts: pins
both ways, missing distributions, markers for another platform or Python, extras, pre-releases,
dependents made for another TensorFlow; and the target collector on this interpreter (.venv has
tensorflow-cpu 2.21.0 with its real Requires-Dist)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tfdoctor.child import source
from tfdoctor.facts import companions, requires_dist
from tfdoctor.checks import dependencies as dependencies_check
from tfdoctor.results.model import Status
from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_checks
from tests.builders import ENV_PYTHON, ENV_SITE, IMPORTED, TF_221_REQUIRES, tensorflow_environment
from tests.plan_support import argvs, plan_of

CHECK = next(c for c in all_checks() if c.id == "dependencies")
IMPORT_FAILED = {"status": "import_failed", "imported": False, "stage": "import_failed", "exit_code": 1,
                 "exception": {"type": "TypeError", "message": "Descriptors cannot be created directly."}}


def run(facts):
    return run_checks([CHECK], facts)[0]


def commands(result, facts) -> list[list[str]]:
    """The plan's steps for this check's repairs (the check writes no command itself)."""
    assert result.remediation.commands == ()
    return argvs(plan_of(facts, [result]))


def test_healthy_environment_passes_with_markers_and_extras_left_out():
    result = run(tensorflow_environment(tensorflow=IMPORTED))
    assert result.status is Status.PASS, result.summary
    assert "tensorflow-cpu 2.21.0" in result.summary
    assert requires_dist.unmet_requirements(tensorflow_environment()) == []


def test_pin_violated_below_warns_while_tensorflow_imports_and_names_the_pin():
    facts = tensorflow_environment({"protobuf": "5.28.0"}, tensorflow=IMPORTED)
    result = run(facts)
    assert result.status is Status.WARN
    assert result.summary == "protobuf 5.28.0 is outside tensorflow-cpu 2.21.0's protobuf<8.0.0,>=6.31.1"
    (repair,) = result.remediation.repairs
    assert (repair.packages, repair.reason) == (("protobuf<8.0.0,>=6.31.1",), result.summary)
    # the plan keeps TensorFlow where it is by pinning the installed build into the same step
    assert commands(result, facts) == [[ENV_PYTHON, "-m", "pip", "install", "--", "protobuf<8.0.0,>=6.31.1", "tensorflow-cpu==2.21.0"]]


def test_pin_violated_above_fails_when_the_import_fails():
    facts = tensorflow_environment({"h5py": "3.15.1"}, tensorflow=IMPORT_FAILED)
    result = run(facts)
    assert result.status is Status.FAIL
    assert result.summary == "h5py 3.15.1 is outside tensorflow-cpu 2.21.0's h5py<3.15.0,>=3.11.0"
    assert "Descriptors cannot be created directly" in result.details[0]
    assert commands(result, facts)[-1][-2:] == ["h5py<3.15.0,>=3.11.0", "tensorflow-cpu==2.21.0"]


def test_every_unmet_pin_is_one_repair_and_all_go_into_one_step():
    facts = tensorflow_environment({"protobuf": "4.25.3", "ml-dtypes": "0.3.2", "numpy": "1.24.4"}, tensorflow=IMPORT_FAILED)
    result = run(facts)
    assert result.status is Status.FAIL
    assert [r.packages for r in result.remediation.repairs] == [
        ("protobuf<8.0.0,>=6.31.1",), ("numpy>=1.26.0",), ("ml-dtypes<1.0.0,>=0.5.1",)]
    assert all("tensorflow-cpu 2.21.0's" in r.reason for r in result.remediation.repairs)
    (step,) = commands(result, facts)
    assert step[4:] == ["--", "protobuf<8.0.0,>=6.31.1", "numpy>=1.26.0", "ml-dtypes<1.0.0,>=0.5.1", "tensorflow-cpu==2.21.0"]
    assert result.summary.endswith("(and 2 more unmet pins)")
    assert [u["name"] for u in result.evidence["unmet"]] == ["protobuf", "numpy", "ml-dtypes"]


def test_a_missing_distribution_counts():
    facts = tensorflow_environment({"h5py": None}, tensorflow=IMPORTED)
    result = run(facts)
    assert result.status is Status.WARN
    assert result.summary == "tensorflow-cpu 2.21.0 requires h5py<3.15.0,>=3.11.0, which is not installed"
    assert "h5py<3.15.0,>=3.11.0" in commands(result, facts)[0]


def test_a_list_without_the_collector_count_is_not_taken_as_complete():
    facts = tensorflow_environment({"h5py": None, "protobuf": "5.28.0"})
    del facts["python"]["distribution_count"]  # hand-written, or trimmed: absent is not "not installed"
    assert [u.name for u in requires_dist.unmet_requirements(facts)] == ["protobuf"]


def test_unmet_reports_top_level_modules_of_the_required_distribution():
    unmet = requires_dist.unmet_requirements(tensorflow_environment({"protobuf": "3.20.3"}))
    assert [(u.name, u.top_level, u.installed, u.requirer) for u in unmet] == \
        [("protobuf", ("google",), "3.20.3", "tensorflow-cpu")]


def test_markers_for_another_platform_or_python_do_not_apply():
    lines = ['tensorflow-intel==2.15.0; platform_system == "Windows"',
             'numpy<2.0.0,>=1.23.5; python_version <= "3.11"', 'numpy<2.0.0,>=1.26.0; python_version >= "3.12"']
    linux = tensorflow_environment({"numpy": "1.26.4"}, requires=lines, tf_name="tensorflow", tf_version="2.15.0")
    assert requires_dist.unmet_requirements(linux) == []
    newer_python = tensorflow_environment({"numpy": "1.24.4"}, requires=lines, tf_name="tensorflow", tf_version="2.15.0",
                              python="3.12.4")
    assert [u.specifier for u in requires_dist.unmet_requirements(newer_python)] == ["<2.0.0,>=1.26.0"]
    windows = tensorflow_environment({"numpy": "1.26.4"}, requires=lines, tf_name="tensorflow", tf_version="2.15.0", system="Windows",
                         machine="AMD64")
    windows["distributions"][0]["top_level"] = []  # the Windows 2.15 `tensorflow` is a shim of tensorflow-intel
    assert [u.name for u in requires_dist.unmet_requirements(windows)] == ["tensorflow-intel"]


def test_marker_environment_is_rebuilt_for_older_reports():
    facts = tensorflow_environment(python="3.10.12", system="Darwin", machine="arm64", with_marker_environment=False)
    environment = requires_dist.marker_environment(facts)
    assert environment["python_version"] == "3.10"
    assert environment["sys_platform"] == "darwin"
    assert environment["platform_machine"] == "arm64"


def test_and_cuda_counts_when_its_nvidia_libraries_are_installed():
    cublas = {"name": "nvidia-cublas-cu12", "version": "12.5.3.2", "top_level": ["nvidia"]}
    old_cudnn = {"name": "nvidia-cudnn-cu12", "version": "8.9.7.29", "top_level": ["nvidia"]}
    assert requires_dist.unmet_requirements(tensorflow_environment(extra=[cublas])) != []  # cudnn missing from the extra
    unmet = requires_dist.unmet_requirements(tensorflow_environment(extra=[cublas, old_cudnn]))
    assert [(u.name, u.installed, u.extra) for u in unmet] == [("nvidia-cudnn-cu12", "8.9.7.29", "and-cuda")]
    assert requires_dist.unmet_requirements(tensorflow_environment()) == []  # no nvidia-* library: the extra was not installed


def test_other_extras_count_only_when_an_installed_distribution_asks_for_them():
    gcs_old = {"name": "tensorflow-io-gcs-filesystem", "version": "0.20.0", "top_level": ["tensorflow_io_gcs_filesystem"]}
    # installed under the extra's name is no request: nobody asked for tensorflow-cpu[gcs-filesystem]
    assert requires_dist.unmet_requirements(tensorflow_environment(extra=[gcs_old])) == []
    asking = {"name": "my-app", "version": "1.0", "requires": ["tensorflow-cpu[gcs-filesystem]>=2.21"]}
    unmet = requires_dist.unmet_requirements(tensorflow_environment(extra=[gcs_old, asking]))
    assert [(u.name, u.extra) for u in unmet] == [("tensorflow-io-gcs-filesystem", "gcs-filesystem")]
    dev = tensorflow_environment(requires=TF_221_REQUIRES + ['pytest>=8; extra == "dev"', 'pylint>=3; extra == "dev"'],
                     extra=[{"name": "pytest", "version": "7.4.0"}])
    assert requires_dist.unmet_requirements(dev) == []  # pylint absent: the dev extra was never installed


def test_an_extra_named_like_an_installed_build_is_not_requested():
    """tensorflow-io-gcs-filesystem 0.37.1 declares `tensorflow-cpu<2.17.0,>=2.16.0; extra == 'tensorflow-cpu'`
    (its Requires-Dist on PyPI): a healthy tensorflow-cpu 2.15.1 environment, as pip installs it, has it."""
    gcs = {"name": "tensorflow-io-gcs-filesystem", "version": "0.37.1", "top_level": ["tensorflow_io_gcs_filesystem"],
           "requires": ['tensorflow<2.17.0,>=2.16.0; extra == "tensorflow"',
                        'tensorflow-aarch64<2.17.0,>=2.16.0; extra == "tensorflow-aarch64"',
                        'tensorflow-cpu<2.17.0,>=2.16.0; extra == "tensorflow-cpu"',
                        'tensorflow-gpu<2.17.0,>=2.16.0; extra == "tensorflow-gpu"',
                        'tensorflow-rocm<2.17.0,>=2.16.0; extra == "tensorflow-rocm"']}
    facts = tensorflow_environment(tf_version="2.15.1", requires=["tensorflow-io-gcs-filesystem>=0.23.1"], extra=[gcs])
    assert requires_dist.unmet_requirements(facts) == []
    assert run(facts).status is Status.PASS


def test_an_installed_prerelease_satisfies_a_plain_range():
    nightly = {"name": "tf-nightly", "version": "2.22.0.dev20251101", "top_level": ["tensorflow"],
               "requires": ["keras-nightly>=3.12.0.dev2025100703"]}
    facts = tensorflow_environment(tf_version="2.22.0rc0", extra=[])
    text = {"name": "tensorflow-text", "version": "2.22.0rc0", "requires": ["tensorflow<2.23,>=2.21"]}
    facts["distributions"].append(text)
    assert requires_dist.unmet_requirements(facts) == []
    nightly_facts = tensorflow_environment(tf_name="tf-nightly", tf_version="2.22.0.dev20251101", requires=nightly["requires"],
                               extra=[{"name": "keras-nightly", "version": "3.13.0.dev2025110103"}])
    assert requires_dist.unmet_requirements(nightly_facts) == []
    assert requires_dist.holds("2.22.0rc1", ">=2.21") is True
    assert requires_dist.holds("not a version", ">=2.21") is None


# tensorflow-text 2.15.0's Requires-Dist as PyPI's wheel METADATA writes it (the companion table's row)
TEXT_215 = {"name": "tensorflow-text", "version": "2.15.0", "top_level": ["tensorflow_text"],
            "requires": ["tensorflow-hub >=0.13.0",
                         'tensorflow <2.16,>=2.15.0 ; platform_machine != "arm64" or platform_system != "Darwin"',
                         'tensorflow-macos <2.16,>=2.15.0 ; platform_machine == "arm64" and platform_system == "Darwin"',
                         "tensorflow-cpu <2.14,>=2.13.0 ; extra == 'tensorflow_cpu'"]}
HUB = {"name": "tensorflow-hub", "version": "0.16.1", "top_level": ["tensorflow_hub"],
       "requires": ["numpy>=1.12.0", "protobuf>=3.19.6", "tf-keras>=2.14.1"]}
TF_KERAS_221 = {"name": "tf-keras", "version": "2.21.0", "top_level": ["tf_keras"], "requires": ["tensorflow<2.22,>=2.21"]}
# hub imports pkg_resources without requiring setuptools: a listing without a setuptools that has it is a broken hub
SETUPTOOLS_80 = {"name": "setuptools", "version": "80.9.0", "top_level": ["setuptools", "pkg_resources"]}


def test_a_dependent_made_for_another_tensorflow_gets_its_release_made_for_the_installed_one():
    """tensorflow-text 2.15.0 beside tensorflow-cpu 2.21.0 (issue 17): the tensorflow-text release made for 2.21
    (companion table), exact, installed --no-deps since it requires `tensorflow`: never `tensorflow<2.16` and
    never the extra's `tensorflow-cpu<2.14` (an extra nobody asked for)."""
    facts = tensorflow_environment(extra=[TEXT_215, HUB, TF_KERAS_221, SETUPTOOLS_80], tensorflow=IMPORTED)
    result = run(facts)
    assert result.status is Status.WARN
    assert result.summary == "tensorflow-cpu 2.21.0 is outside tensorflow-text 2.15.0's tensorflow<2.16,>=2.15.0"
    release = companions.release_for("tensorflow-text", "2.21.0", requires_dist.marker_environment(facts))
    assert release is not None and release.version.startswith("2.21")
    assert [r.packages for r in result.remediation.repairs] == [(f"tensorflow-text=={release.version}",)]
    assert "made for TensorFlow 2.21.0" in result.remediation.repairs[0].reason
    assert "keeping TensorFlow 2.21.0 where it is" in result.remediation.advice
    plan = plan_of(facts, [result])
    assert plan.moves_tensorflow is None and not plan.conflicts
    installs = [words for words in argvs(plan) if "install" in words]
    assert installs[-1] == [ENV_PYTHON, "-m", "pip", "install", "--no-deps", "--", f"tensorflow-text=={release.version}"]
    named = {Requirement(w).name for words in installs for w in words[4:] if not w.startswith("-")}
    assert "tensorflow" not in named and "tensorflow-macos" not in named  # no second build


def test_a_companion_with_no_release_for_the_installed_tensorflow_moves_it_and_says_so():
    """tensorflow-decision-forests follows TensorFlow's minor and has no release for 2.21 (companion table):
    TensorFlow moves, as tensorflow-cpu, into the range of the installed release, and the plan says why."""
    forests = {"name": "tensorflow-decision-forests", "version": "1.8.1", "top_level": ["tensorflow_decision_forests"],
               "requires": ["numpy", "pandas", "tensorflow~=2.15.0", "six", "absl-py", "wheel", "wurlitzer"]}
    facts = tensorflow_environment(extra=[forests], tensorflow=IMPORTED)
    assert companions.release_for("tensorflow-decision-forests", "2.21.0", requires_dist.marker_environment(facts)) is None
    result = run(facts)
    repair = next(r for r in result.remediation.repairs if r.packages == ("tensorflow-cpu~=2.15.0",))
    assert "no tensorflow-decision-forests release is made for TensorFlow 2.21.0" in repair.reason
    assert "No release of tensorflow-decision-forests is made for TensorFlow 2.21.0" in result.remediation.advice
    plan = plan_of(facts, [result])
    assert plan.moves_tensorflow.target == "tensorflow-cpu~=2.15.0" and "TensorFlow must move" in plan.moves_tensorflow.why
    assert not plan.conflicts


MY_MODEL = {"name": "my-model", "version": "1.0", "top_level": ["my_model"], "requires": ["tensorflow<2.16,>=2.15"]}


def test_a_dependent_only_another_tensorflow_satisfies_moves_tensorflow_and_says_why():
    facts = tensorflow_environment(tf_name="tensorflow", extra=[MY_MODEL], tensorflow=IMPORTED)
    result = run(facts)
    assert result.status is Status.WARN
    (repair,) = result.remediation.repairs
    assert repair.packages == ("tensorflow<2.16,>=2.15",)
    assert repair.reason.startswith("tensorflow 2.21.0 is outside my-model 1.0's tensorflow<2.16,>=2.15")
    assert "TensorFlow must move" in repair.reason
    assert "only another TensorFlow" in result.remediation.advice and "moves TensorFlow" in result.remediation.advice
    plan = plan_of(facts, [result])
    assert argvs(plan) == [[ENV_PYTHON, "-m", "pip", "install", "--", "tensorflow<2.16,>=2.15"]]
    move = plan.moves_tensorflow
    assert (move.source, move.target, move.why) == ("tensorflow==2.21.0", "tensorflow<2.16,>=2.15", repair.reason)
    # the moved TensorFlow brings its own pins: the old one's unmet protobuf pin stays out of the step
    facts = tensorflow_environment({"protobuf": "4.25.3"}, tf_name="tensorflow", extra=[MY_MODEL], tensorflow=IMPORTED)
    result = run(facts)
    assert [r.packages for r in result.remediation.repairs] == [("tensorflow<2.16,>=2.15",)]
    assert argvs(plan_of(facts, [result])) == [[ENV_PYTHON, "-m", "pip", "install", "--", "tensorflow<2.16,>=2.15"]]


def test_tensorflow_moves_under_the_installed_builds_name_never_a_second_build():
    """tensorflow-cpu provides the `tensorflow` my-model requires: TensorFlow moves as tensorflow-cpu."""
    facts = tensorflow_environment(extra=[MY_MODEL], tensorflow=IMPORTED)
    result = run(facts)
    assert result.summary == "tensorflow-cpu 2.21.0 is outside my-model 1.0's tensorflow<2.16,>=2.15"
    assert [r.packages for r in result.remediation.repairs] == [("tensorflow-cpu<2.16,>=2.15",)]
    assert "as tensorflow-cpu, the build installed" in result.remediation.repairs[0].reason
    plan = plan_of(facts, [result])
    assert argvs(plan) == [[ENV_PYTHON, "-m", "pip", "install", "--", "tensorflow-cpu<2.16,>=2.15"]]
    assert not plan.conflicts and plan.moves_tensorflow.source == "tensorflow-cpu==2.21.0"


def test_two_dependents_wanting_disjoint_tensorflows_are_a_conflict_naming_both():
    other = {"name": "other-model", "version": "2.0", "top_level": ["other_model"], "requires": ["tensorflow>=2.18"]}
    facts = tensorflow_environment({"protobuf": "4.25.3"}, tf_name="tensorflow", tf_version="2.17.0", extra=[MY_MODEL, other],
                       tensorflow=IMPORTED)
    result = run(facts)
    plan = plan_of(facts, [result])
    (conflict,) = plan.conflicts
    assert conflict.distribution == "tensorflow"
    reasons = " ".join(why for _, _, why in conflict.wants)
    assert "my-model 1.0's" in reasons and "other-model 2.0's" in reasons
    assert not any("tensorflow<" in step.command or "tensorflow>=" in step.command for step in plan.steps)


def test_tensorflow_cpu_stands_in_for_tensorflow_at_a_fitting_version():
    assert requires_dist.unmet_requirements(tensorflow_environment(extra=[TF_KERAS_221])) == []
    old = {"name": "tf-keras", "version": "2.15.1", "top_level": ["tf_keras"], "requires": ["tensorflow<2.16,>=2.15"]}
    facts = tensorflow_environment(extra=[old], tensorflow={**IMPORTED, "keras": {"layer_ok": False, "error": {
        "type": "ImportError", "message": "cannot import name 'keras' from 'tf_keras'"}}})
    result = run(facts)
    assert result.status is Status.FAIL  # tf.keras itself fails: a Keras pin known to break
    assert result.summary == "tensorflow-cpu 2.21.0 is outside tf-keras 2.15.1's tensorflow<2.16,>=2.15"
    assert [r.packages for r in result.remediation.repairs] == [("tf-keras==2.21.0",)]
    # tf-keras 2.21.0 requires only `tensorflow`, which tensorflow-cpu provides: --no-deps, no second build
    assert commands(result, facts) == [[ENV_PYTHON, "-m", "pip", "install", "--no-deps", "--", "tf-keras==2.21.0"]]


def test_numpy_past_the_abi_tensorflow_was_built_for_fails_even_without_an_import():
    lines = ["numpy<2.0.0,>=1.23.5"]
    result = run(tensorflow_environment({"numpy": "2.0.1"}, tf_name="tensorflow", tf_version="2.15.0", requires=lines))
    assert result.status is Status.FAIL
    assert "NumPy 1.x" in result.details[0]


def test_uv_and_conda_environments_get_their_installer():
    uv = tensorflow_environment({"protobuf": "5.28.0"})
    uv["python"]["uv_version"] = "0.4.0"
    assert commands(run(uv), uv) == [["uv", "pip", "install", "--python", ENV_PYTHON, "--", "protobuf<8.0.0,>=6.31.1",
                                      "tensorflow-cpu==2.21.0"]]
    conda = tensorflow_environment({"protobuf": "5.28.0"})
    conda["python"].update(conda=True, in_venv=False)
    assert commands(run(conda), conda)[0][:4] == [ENV_PYTHON, "-m", "pip", "install"]


def test_skips_without_recorded_requires_or_without_tensorflow():
    facts = tensorflow_environment(tf_version="2.99.0")  # a release the published table does not hold
    for entry in facts["distributions"]:
        entry.pop("requires", None)
    assert run(facts).status is Status.SKIP
    known = tensorflow_environment()  # 2.21.0: its published pins stand in for the unrecorded ones
    for entry in known["distributions"]:
        entry.pop("requires", None)
    assert run(known).status is not Status.SKIP
    assert run(known).evidence["published_requires"]
    assert run({"python": {"version": "3.11.7"}, "distributions": [{"name": "rich", "version": "13.0"}]}).status \
        is Status.SKIP


def test_a_dependent_is_checked_with_its_own_pins():
    hub = {"name": "tensorflow-hub", "version": "0.16.1", "requires": ["numpy>=1.12.0", "protobuf>=3.19.6",
                                                                        "tf-keras>=2.14.1"]}
    unmet = requires_dist.unmet_requirements(tensorflow_environment(extra=[hub]))
    assert [u.describe() for u in unmet] == ["tensorflow-hub 0.16.1 requires tf-keras>=2.14.1, which is not installed"]


@pytest.fixture(scope="module")
def described_here():
    completed = subprocess.run([sys.executable, "-c", source("target_info")], capture_output=True, check=True,
                               cwd=Path(__file__).parent)
    return json.loads(completed.stdout)


def test_target_info_records_the_real_requires_dist_and_marker_environment(described_here):
    facts = {"python": described_here["python"], "distributions": described_here["distributions"],
             "host": {"system": "Linux"}}
    names = {d["name"] for d in facts["distributions"]}
    builds = [d for d in facts["distributions"] if requires_dist.is_tensorflow_build(d["name"])]
    if not builds:
        pytest.skip("no TensorFlow in this interpreter")
    tf = builds[0]
    assert any(line.startswith("protobuf") for line in tf["requires"])
    assert {"protobuf", "numpy", "h5py", "ml-dtypes", "keras", "absl-py"} <= names  # what its pins name
    environment = described_here["python"]["marker_environment"]
    assert environment["python_version"] == "%d.%d" % sys.version_info[:2]
    assert environment["sys_platform"] == sys.platform
    assert described_here["python"]["distribution_count"] >= len(facts["distributions"]) - 1
    # This environment is healthy as installed: every pin of its TensorFlow holds.
    assert [u for u in requires_dist.unmet_requirements(facts) if u.requirer == tf["name"]] == []


def test_target_info_records_a_fake_dependent_and_what_it_names(tmp_path):
    info = tmp_path / "tensorflow_text-2.15.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow-text\nVersion: 2.15.0\n"
                                   "Requires-Dist: tensorflow<2.16,>=2.15.0\nRequires-Dist: fake-helper>=1\n\n"
                                   "Requires-Dist: not-a-header (this is the description)\n")
    (info / "RECORD").write_text("tensorflow_text/__init__.py,,\n")
    other = tmp_path / "unrelated_thing-1.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: unrelated-thing\nVersion: 1.0\n\n")
    helper = tmp_path / "fake_helper-0.5.dist-info"
    helper.mkdir()
    (helper / "METADATA").write_text("Metadata-Version: 2.1\nName: fake_helper\nVersion: 0.5\n\n")
    completed = subprocess.run([sys.executable, "-c", source("target_info")], capture_output=True, check=True,
                               cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    described = json.loads(completed.stdout)
    by_name = {d["name"]: d for d in described["distributions"]}
    assert by_name["tensorflow-text"]["requires"] == ["tensorflow<2.16,>=2.15.0", "fake-helper>=1"]
    assert by_name["tensorflow-text"]["top_level"] == ["tensorflow_text"]
    assert by_name["fake-helper"]["version"] == "0.5"
    assert "unrelated-thing" not in by_name
    facts = {"python": described["python"], "distributions": described["distributions"]}
    assert "fake-helper 0.5 is outside tensorflow-text 2.15.0's fake-helper>=1" in \
        [u.describe() for u in requires_dist.unmet_requirements(facts)]


def test_tensorflow_install_leaves_declared_pins_to_this_check():
    install = next(c for c in all_checks() if c.id == "tensorflow-install")
    lines = ["numpy<2.0.0,>=1.23.5", "keras>=3.0.0"]
    facts = tensorflow_environment({"numpy": "2.0.1", "keras": "3.3.3"}, tf_name="tensorflow", tf_version="2.16.1", requires=lines)
    results = {r.check_id: r for r in run_checks([install, CHECK], facts)}
    assert results["dependencies"].status is Status.FAIL
    assert results["dependencies"].summary == "numpy 2.0.1 is outside tensorflow 2.16.1's numpy<2.0.0,>=1.23.5"
    assert results["tensorflow-install"].status is Status.PASS, results["tensorflow-install"].summary
    assert any("see dependencies" in line for line in results["tensorflow-install"].details)


def test_tensorflow_install_keeps_its_curated_pins_where_requires_dist_is_not_recorded():
    install = next(c for c in all_checks() if c.id == "tensorflow-install")
    facts = tensorflow_environment({"numpy": "2.0.1"}, tf_name="tensorflow", tf_version="2.16.1")
    del facts["distributions"][0]["requires"]
    results = {r.check_id: r for r in run_checks([install, CHECK], facts)}
    assert results["tensorflow-install"].status is Status.FAIL
    assert "NumPy 2.0.1" in results["tensorflow-install"].summary
    # and dependencies reads 2.16.1's published numpy<2.0.0: the two agree (it used to skip, issue 29 round 2)
    assert results["dependencies"].status is Status.FAIL
    # (several pins of this 2.21-shaped environment break 2.16.1 since issue 29 round 3: numpy's is among them)
    unmet = {u["name"]: u for u in results["dependencies"].evidence["unmet"]}
    assert unmet["numpy"]["installed"] == "2.0.1" and "<2.0.0" in unmet["numpy"]["specifier"]


def test_tensorflow_install_keeps_the_numpy_abi_rule_where_an_old_pin_has_no_upper_bound():
    install = next(c for c in all_checks() if c.id == "tensorflow-install")
    facts = tensorflow_environment({"numpy": "2.0.1"}, tf_name="tensorflow", tf_version="2.11.0", requires=["numpy>=1.20"])
    results = {r.check_id: r for r in run_checks([install, CHECK], facts)}
    assert results["dependencies"].status is Status.PASS  # the metadata allows it...
    assert results["tensorflow-install"].status is Status.FAIL  # ...the curated ABI fact knows it breaks


def test_requirers_that_disagree_get_no_impossible_command_but_the_reason():
    metadata = {"name": "tensorflow-metadata", "version": "1.13.1", "top_level": ["tensorflow_metadata"],
                "requires": ["protobuf<4,>=3.20.3", "absl-py<2.0.0,>=0.9"]}
    facts = tensorflow_environment({"protobuf": "3.20.3", "absl-py": "2.1.0"}, extra=[metadata], tensorflow=IMPORTED)
    unmet = requires_dist.unmet_requirements(facts)
    assert sorted((u.requirer, u.name) for u in unmet) == [("tensorflow-cpu", "protobuf"),
                                                           ("tensorflow-metadata", "absl-py")]
    assert dependencies_check.clashing(unmet) == {}
    both = tensorflow_environment({"protobuf": "5.29.0"}, extra=[metadata], tensorflow=IMPORTED)
    unmet = requires_dist.unmet_requirements(both)
    assert list(dependencies_check.clashing(unmet)) == ["protobuf"]
    result = run(both)
    assert "no protobuf satisfies both" in result.remediation.advice
    # each pin is asked for, naming its requirer; the plan finds they cannot meet: a conflict, never a command
    assert [r.packages for r in result.remediation.repairs] == [
        ("protobuf<8.0.0,>=6.31.1",), ("protobuf<4,>=3.20.3",), ("absl-py<2.0.0,>=0.9",)]
    plan = plan_of(both, [result])
    # what can be done is done (absl-py), the clash is not
    assert [step.command for step in plan.steps] == [f"{ENV_PYTHON} -m pip install -- 'absl-py<2.0.0,>=0.9' 'tensorflow-cpu==2.21.0'"]
    (conflict,) = plan.conflicts
    assert conflict.distribution == "protobuf"
    assert [(check, requirement) for check, requirement, _ in conflict.wants] == [
        ("dependencies", "protobuf<8.0.0,>=6.31.1"), ("dependencies", "protobuf<4,>=3.20.3")]
    reasons = " ".join(reason for _, _, reason in conflict.wants)
    assert "tensorflow-cpu 2.21.0's" in reasons and "tensorflow-metadata 1.13.1's" in reasons


def test_target_info_keeps_what_other_checks_read_without_a_requirement_naming_it(tmp_path):
    for name, version in (("torch", "2.5.1"), ("nvidia_cudnn_cu12", "9.1.0.70"), ("left_out", "1.0")):
        info = tmp_path / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    completed = subprocess.run([sys.executable, "-c", source("target_info")], capture_output=True, check=True,
                               cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    names = {d["name"] for d in json.loads(completed.stdout)["distributions"]}
    assert {"torch", "nvidia-cudnn-cu12"} <= names  # cuda-build reads both
    assert "left-out" not in names


def test_a_distribution_requiring_tensorflow_only_under_an_extra_counts_when_that_extra_is_requested():
    transformers = {"name": "transformers", "version": "4.40.0",
                    "requires": ["tokenizers<0.20,>=0.19", 'tensorflow<2.16,>2.9; extra == "tf"',
                                 'tf-keras; extra == "tf"']}
    tokenizers = {"name": "tokenizers", "version": "0.21.0"}
    bare = tensorflow_environment(tf_name="tensorflow", extra=[transformers, tokenizers])
    assert requires_dist.unmet_requirements(bare) == []  # nobody asked for transformers[tf]
    tf_keras = {"name": "tf-keras", "version": "2.21.0", "requires": []}
    # everything the extra names installed is still no request (pip records no extras)
    assert requires_dist.unmet_requirements(tensorflow_environment(tf_name="tensorflow", extra=[transformers, tokenizers, tf_keras])) == []
    app = {"name": "my-app", "version": "1.0", "requires": ["transformers[tf]>=4.40"]}
    with_tf = tensorflow_environment(tf_name="tensorflow", extra=[transformers, tokenizers, tf_keras, app])
    assert sorted(u.name for u in requires_dist.unmet_requirements(with_tf)) == ["tensorflow", "tokenizers"]


def test_the_doctor_itself_is_not_judged():
    doctor = {"name": "tfdoctor", "version": "0.1.0", "requires": [
        "typer>=0.12", "tensorflow; (sys_platform != 'darwin' or platform_machine != 'arm64') and extra == 'tensorflow'"]}
    assert requires_dist.unmet_requirements(tensorflow_environment(tf_name="tensorflow", extra=[doctor])) == []


def test_bounds_two_requirers_share_are_written_once_the_tighter_one():
    # the live numpy case: tensorflow-cpu 2.21 wants numpy>=1.26.0, the NumPy-ABI rule and a dependent
    # want >=2.0.0; the command once read 'numpy>=2.0.0,>=1.26.0' (pip takes it, a reader stumbles)
    jax_like = {"name": "jax-like", "version": "1.0", "requires": ["numpy<2.3,>=2.0.0", "tensorflow>=2.0"]}
    facts = tensorflow_environment({"numpy": "1.25.2"}, extra=[jax_like], tensorflow=IMPORTED)
    result = run(facts)
    assert sorted(r.packages for r in result.remediation.repairs) == [("numpy<2.3,>=2.0.0",), ("numpy>=1.26.0",)]
    numpy = [c for c in commands(result, facts)[0] if c.startswith("numpy")]
    assert numpy == ["numpy<2.3,>=2.0.0"]


@pytest.mark.parametrize("clauses, kept", [
    (["<2.3", ">=2.0.0", ">=1.26.0"], ["<2.3", ">=2.0.0"]),
    ([">=1.26.0", "<3", "<2.2.0", "!=2.1.0"], [">=1.26.0", "<2.2.0", "!=2.1.0"]),
    (["<=2", "<2"], ["<2"]),
    ([">=1", ">1"], [">1"]),
    (["==2.*", ">=1"], ["==2.*", ">=1"]),
])
def test_tightest_drops_only_implied_bounds(clauses, kept):
    assert requires_dist.tightest(clauses) == kept


def test_a_shim_without_its_real_build_gets_that_build_and_no_second_one():
    """The Windows `tensorflow` 2.15.0 is a shim requiring tensorflow-intel==2.15.0 (its Requires-Dist on PyPI):
    without it, the dependencies check and tensorflow-install ask for the same real build, nothing moves."""
    lines = ['tensorflow-intel==2.15.0; platform_system == "Windows"', "numpy<2.0.0,>=1.23.5"]
    facts = tensorflow_environment({"numpy": "1.26.4"}, requires=lines, tf_name="tensorflow", tf_version="2.15.0", system="Windows",
                       machine="AMD64")
    facts["distributions"][0]["top_level"] = []  # the shim has no tensorflow/ of its own
    assert requires_dist.tensorflow_pin(facts) is None  # no real build to keep where it is
    results = run_checks([CHECK, next(c for c in all_checks() if c.id == "tensorflow-install")], facts)
    assert [r.status for r in results] == [Status.FAIL, Status.FAIL]  # untried, a missing real build is unmet
    assert [r.remediation.repairs[0].packages for r in results] == [("tensorflow-intel==2.15.0",)] * 2
    plan = plan_of(facts, results)
    assert [step.command for step in plan.steps] == [f"{ENV_PYTHON} -m pip install '--' 'tensorflow-intel==2.15.0'"]  # PowerShell: literal single quotes (a quoted --)
    assert not plan.conflicts and plan.moves_tensorflow is None


# --- issue 29, round 2: a saved report without Requires-Dist is judged on the release's published pins ---

def _saved_report(*distributions, system="Linux", machine="x86_64", python="3.12"):
    """A hand-written report: distributions without Requires-Dist, no distribution_count (a partial list)."""
    return {"host": {"system": system, "machine": machine}, "python": {"machine": machine, "version": python},
            "distributions": [{"name": n, "version": v} for n, v in distributions]}


def test_saved_report_without_requires_dist_is_judged_on_the_published_pins():
    # fixtures/fresh/log-noise-tensorflow-2.20-protobuf-gencode-one-major-older: 2.20 accepts protobuf 6
    result = run(_saved_report(("tensorflow", "2.20.0"), ("protobuf", "6.31.1")))
    assert result.status is Status.PASS, result.summary
    assert any("published metadata" in d for d in result.details)
    assert "tensorflow 2.20.0 (linux-x86_64 wheel metadata, https://pypi.org/project/tensorflow/2.20.0/#files)" \
        in result.evidence["published_requires"]


def test_a_published_pin_a_saved_report_violates_is_flagged_with_its_repair():
    result = run(_saved_report(("tensorflow", "2.18.0"), ("numpy", "2.1.3")))
    assert result.status is Status.FAIL  # the import was not tried: the declared incompatibility stands
    assert any("`pip check` reports it too" in d for d in result.details)
    assert "numpy 2.1.3 is outside tensorflow 2.18.0's numpy<2.1.0,>=1.26.0" in result.summary
    assert any("numpy<2.1.0,>=1.26.0" in " ".join(r.packages) for r in result.remediation.repairs)


def test_the_environments_own_requires_dist_wins_and_unknown_releases_are_not_guessed():
    own = _saved_report(("tensorflow", "2.18.0"), ("numpy", "2.1.3"))
    own["distributions"][0]["requires"] = ["numpy>=1.26.0"]
    assert run(own).status is Status.PASS
    assert "published_requires" not in run(own).evidence
    # no platform, or a release the table does not hold: nothing is filled, the check skips as before
    assert run({"distributions": [{"name": "tensorflow", "version": "2.18.0"}]}).status is Status.SKIP
    assert run(_saved_report(("tensorflow", "9.9.0"))).status is Status.SKIP


def test_a_windows_shim_is_judged_on_its_own_published_line_only():
    # fixtures/fresh/windows-tensorflow-io-gcs-filesystem-0.31-is-fine: the shim's Requires-Dist is
    # tensorflow-intel==2.18.0, which a partial list may leave out: nothing unmet, nothing invented
    result = run(_saved_report(("tensorflow", "2.18.0"), ("tensorflow-io-gcs-filesystem", "0.31.0"),
                               system="Windows", machine="AMD64", python="3.10.0"))
    assert result.status is Status.PASS, result.summary


def test_a_windows_shim_whose_real_build_a_partial_list_leaves_out_is_judged_on_the_real_builds_pins():
    # fixtures/fresh/aside3/windows-tensorflow-2.18-with-protobuf-6.33.5-getprototype (tensorflow#109469): the
    # shim installs tensorflow-intel 2.18.0, whose protobuf<6.0.0dev the report's protobuf 6.33.5 violates
    facts = _saved_report(("tensorflow", "2.18.0"), ("protobuf", "6.33.5"), system="Windows", machine="AMD64",
                          python="3.12.8")
    facts["tensorflow"] = {"status": "ok", "imported": True, "version": "2.18.0"}  # it imports: a warning
    result = run(facts)
    assert result.status is Status.WARN, result.summary
    assert "protobuf 6.33.5" in result.summary and "<6.0.0dev" in result.summary
    assert any(p.startswith("tensorflow-intel 2.18.0 (windows-x86_64 wheel metadata")
               for p in result.evidence["published_requires"])
    assert any("protobuf" in " ".join(r.packages) for r in result.remediation.repairs)
    # listed, the real build is read on its own (and, recorded with its Requires-Dist, wins)
    both = _saved_report(("tensorflow", "2.18.0"), ("tensorflow-intel", "2.18.0"), ("protobuf", "5.29.5"),
                         system="Windows", machine="AMD64", python="3.12.8")
    assert run(both).status is Status.PASS, run(both).summary


@pytest.mark.parametrize("tf, pin, keras", [
    ("2.15.0.post1", "keras<2.16,>=2.15.0", "3.0.3"),  # tensorflow#62825: keras-nlp pulled Keras 3 beside 2.15
    ("2.16.1", "keras>=3.0.0", "2.15.0"),              # the other way: Keras 2 under a Keras 3 TensorFlow
])
def test_a_keras_of_another_major_than_tensorflow_declares_is_known_to_break_tf_keras(tf, pin, keras):
    facts = _saved_report(("tensorflow", tf), ("keras", keras))
    facts["distributions"][0]["requires"] = [pin]
    result = run(facts)  # the import was not tried: an ordinary unmet pin would only warn
    assert result.status is Status.FAIL, result.summary
    assert any("another API, so tf.keras breaks" in d for d in result.details)
    assert any(pin in " ".join(r.packages) for r in result.remediation.repairs)


def test_a_keras_inside_its_major_but_outside_the_pin_fails_untried_and_warns_once_tf_keras_works():
    facts = _saved_report(("tensorflow", "2.15.0"), ("keras", "2.14.0"))
    facts["distributions"][0]["requires"] = ["keras<2.16,>=2.15.0"]
    untried = run(facts)
    assert untried.status is Status.FAIL  # as pip check: nothing shows the environment survives the pin
    assert not any("another API" in d for d in untried.details)  # not the Keras-major rule: the plain declaration
    facts["tensorflow"] = {"status": "ok", "imported": True, "version": "2.15.0",
                           "keras": {"flavor": "keras2", "version": "2.14.0", "layer_ok": True}}
    assert run(facts).status is Status.WARN  # tried, and tf.keras works: the pin is a risk, not a break


# --- issue 29, round 3: which violated pins break TensorFlow, read from the pin's own series ---

def test_a_keras_pin_whose_floor_is_a_patch_release_still_admits_only_keras_2():
    # keras#19390: tensorflow 2.13.1 requires keras<2.14,>=2.13.1 (no 2.x.0 satisfies it), beside keras 3.1.1
    facts = _saved_report(("tensorflow", "2.13.1"), ("keras", "3.1.1"))
    facts["distributions"][0]["requires"] = ["keras<2.14,>=2.13.1"]
    result = run(facts)
    assert result.status is Status.FAIL, result.summary
    assert any("admits no Keras 3.x" in d for d in result.details)


@pytest.mark.parametrize("tf, package, pin, installed", [
    ("2.16.1", "ml-dtypes", "ml-dtypes~=0.3.1", "0.2.0"),          # svpino/apple-silicon#2: another 0.x minor
    ("2.16.1", "protobuf", "protobuf<5.0.0dev,>=3.20.3", "6.31.1"),  # another protobuf major
    ("2.16.1", "numpy", "numpy<2.0.0,>=1.26.0", "2.1.0"),          # another NumPy major
])
def test_a_package_tensorflows_import_loads_outside_every_series_of_its_pin_fails_untried(tf, package, pin, installed):
    facts = _saved_report(("tensorflow", tf), (package, installed))
    facts["distributions"][0]["requires"] = [pin]
    result = run(facts)  # the import was not tried in this run
    assert result.status is Status.FAIL, result.summary
    assert any(f"`import tensorflow` loads {package} itself" in d or "built for NumPy" in d for d in result.details)
    assert package in result.remediation.advice  # the advice names the pin, whatever the plan does with it


def test_the_import_time_rule_yields_to_a_tried_import_and_to_a_pin_inside_its_series():
    # tensorflow#109469: TensorFlow 2.18 imports (with warnings) beside protobuf 6.33.5: the tried import is the fact
    tried = _saved_report(("tensorflow", "2.18.0"), ("protobuf", "6.33.5"))
    tried["distributions"][0]["requires"] = ["protobuf<6.0.0dev,>=3.20.3"]
    tried["tensorflow"] = {"status": "ok", "imported": True, "version": "2.18.0"}
    assert run(tried).status is Status.WARN
    # inside the pin's series (ml-dtypes 0.3.0 under ~=0.3.1), or a package TensorFlow's import does not load
    # (absl-py): untried, an ordinary unmet pin fails as pip check does, but not by the import-time rule
    inside = _saved_report(("tensorflow", "2.16.1"), ("ml-dtypes", "0.3.0"))
    inside["distributions"][0]["requires"] = ["ml-dtypes~=0.3.1"]
    other = _saved_report(("tensorflow", "2.16.1"), ("absl-py", "0.9.0"))
    other["distributions"][0]["requires"] = ["absl-py>=1.0.0"]
    for facts in (inside, other):
        result = run(facts)
        assert result.status is Status.FAIL
        assert not any("loads" in d and "itself" in d for d in result.details)
        facts["tensorflow"] = {"status": "ok", "imported": True, "version": "2.16.1"}
        assert run(facts).status is Status.WARN


def test_a_companions_published_tensorflow_pin_is_judged_in_a_saved_report():
    """aside6 (scored before this change): a report listing tensorflow 2.20.0 beside tf-keras 2.17.0, no Requires-Dist
    recorded. tf-keras 2.17.0's published `tensorflow<2.18,>=2.17` (companions.toml, from its PyPI METADATA) is
    judged, only that line: what else it requires a partial list may leave out."""
    result = run(_saved_report(("tensorflow", "2.20.0"), ("tf-keras", "2.17.0")))
    assert "tensorflow 2.20.0 is outside tf-keras 2.17.0's tensorflow<2.18,>=2.17" in result.summary
    assert any(p.startswith("tf-keras 2.17.0 (") for p in result.evidence["published_requires"])
    assert any(" ".join(r.packages).startswith("tf-keras==2.20.") for r in result.remediation.repairs)
    assert run(_saved_report(("tensorflow", "2.20.0"), ("tf-keras", "2.20.1"))).status is Status.PASS


def test_a_report_without_its_platform_is_judged_on_the_pins_every_platform_declares():
    # fixtures/fresh/round8 (a ComfyUI thread): Python 3.13, TensorFlow 2.21.0 and Keras, no OS or machine
    facts = {"python": {"version": "3.13"}, "distributions": [{"name": "tensorflow", "version": "2.21.0"},
                                                              {"name": "keras", "version": "3.13.2"}]}
    result = run(facts)
    assert result.status is Status.PASS, result.summary
    assert any("every platform's wheel metadata" in p for p in result.evidence["published_requires"])
    facts["distributions"][1]["version"] = "3.11.3"  # below every platform's keras>=3.12.0
    assert run(facts).status is Status.FAIL  # untried: the declared incompatibility stands


def test_a_report_without_its_python_is_still_judged_on_what_it_records():
    # fixtures/fresh/round7 (vocal-separate#16): pip's resolver lines only, no Python, OS or machine
    facts = {"distributions": [{"name": "tensorflow", "version": "2.18.0", "requires": ["numpy<2.1.0,>=1.26.0"]},
                               {"name": "numpy", "version": "2.1.3"}]}
    result = run(facts)
    assert result.status is Status.FAIL, result.summary
    assert "numpy 2.1.3 is outside tensorflow 2.18.0's numpy<2.1.0,>=1.26.0" in result.summary
    # a marker the report cannot decide (no Python recorded) is never held against it
    facts["distributions"][0]["requires"] = ['numpy<2.1.0,>=1.26.0; python_version >= "3.10"']
    assert run(facts).status is not Status.FAIL


def test_a_missing_companion_with_no_wheel_here_gets_no_install_command():
    # keras-nlp 0.8.2 requires tensorflow-text on Windows, whose releases made for TensorFlow 2.16 have Linux and
    # macOS wheels only: `pip install tensorflow-text` finds nothing there (or drags TensorFlow back to 2.10)
    from tests.plan_support import as_result, plan_of

    facts = {"host": {"system": "Windows", "machine": "AMD64"},
             "python": {"machine": "AMD64", "version": "3.11.5", "distribution_count": 3},
             "distributions": [
                 {"name": "tensorflow", "version": "2.16.1", "requires": ['tensorflow-intel==2.16.1; platform_system == "Windows"']},
                 {"name": "tensorflow-intel", "version": "2.16.1", "requires": []},
                 {"name": "keras-nlp", "version": "0.8.2", "requires": ['tensorflow-text ; platform_system != "Darwin"']}],
             "tensorflow": {"status": "ok", "imported": True, "version": "2.16.1"}}
    result = run(facts)
    assert result.status is Status.WARN and "requires tensorflow-text, which is not installed" in result.summary
    assert result.remediation.repairs == ()
    assert "No release of tensorflow-text made for TensorFlow 2.16.1" in result.remediation.advice
    assert not plan_of(facts, as_result("dependencies", result)).steps
    # on Linux the same requirement is installable: the install stays
    linux = {**facts, "host": {"system": "Linux", "machine": "x86_64"},
             "python": {**facts["python"], "machine": "x86_64"}}
    assert any("tensorflow-text" in " ".join(r.packages) for r in run(linux).remediation.repairs)


# --- an installed release that imports what nothing here provides (knowledge/module_providers.toml) ------------

def tensorboard_beside(tensorboard: str, setuptools: str | None, versions: dict | None = None):
    extra = [{"name": "tensorboard", "version": tensorboard, "location": "/venv/lib/python3.11/site-packages",
              "top_level": ["tensorboard"], "requires": ["setuptools>=41.0.0", "numpy>=1.12.0"]}]
    if setuptools:
        extra.append({"name": "setuptools", "version": setuptools, "location": "/venv/lib/python3.11/site-packages",
                      "top_level": ["setuptools", "pkg_resources"][:1 if setuptools.startswith("8") else 2]})
    return tensorflow_environment(versions, extra=extra, tensorflow=IMPORTED)


def test_tensorboard_before_2_21_beside_setuptools_82_or_later_warns_and_pins_setuptools_below_it():
    # measured: tensorflow-cpu 2.20.0 installed today brings tensorboard 2.20.0 and setuptools 84.2.1 (tensorboard
    # asks only setuptools>=41.0.0); `tensorboard --version` then dies on `import pkg_resources`, which
    # setuptools 82 removed (tensorboard#7107), while TensorFlow imports; 'setuptools<82' repairs it
    facts = tensorboard_beside("2.20.0", "84.2.1")
    result = run(facts)
    assert result.status is Status.WARN
    assert result.summary.startswith("tensorboard 2.20.0 imports pkg_resources, which setuptools<82 provides "
                                     "(setuptools 84.2.1, installed here, has not): the `tensorboard` command")
    assert [r.packages for r in result.remediation.repairs] == [("setuptools<82",)]
    assert commands(result, facts) == [[ENV_PYTHON, "-m", "pip", "install", "--", "setuptools<82", "tensorflow-cpu==2.21.0"]]


def test_tensorflow_hub_beside_a_setuptools_without_pkg_resources_warns_before_it_is_imported():
    # hub 0.13.0-0.16.1 import pkg_resources and require no setuptools (hub#934): a saved report without the child's
    # imports still gets the repair the live run's companions check gives
    facts = tensorflow_environment(extra=[HUB, TF_KERAS_221, {"name": "setuptools", "version": "82.0.0"}],
                                   tensorflow=IMPORTED)
    result = run(facts)
    assert result.status is Status.WARN and "`import tensorflow_hub` fails" in result.summary
    assert [r.packages for r in result.remediation.repairs] == [("setuptools<82",)]
    facts["distributions"][-1]["version"] = "81.0.0"
    assert run(facts).status is Status.PASS


@pytest.mark.parametrize("tensorboard, setuptools", [("2.20.0", "80.9.0"), ("2.21.0", "84.2.1")],
                         ids=["setuptools-with-pkg-resources", "tensorboard-without-the-import"])
def test_no_warning_where_the_provider_has_the_module_or_tensorboard_does_not_import_it(tensorboard, setuptools):
    assert run(tensorboard_beside(tensorboard, setuptools)).status is Status.PASS


def test_an_absent_provider_counts_only_in_a_complete_list():
    # tensorboard's own pin asks for setuptools (unmet); installing the newest would still lack pkg_resources, so
    # the provider's bound joins the pin's step
    facts = tensorboard_beside("2.19.0", None)
    result = run(facts)
    assert result.status is Status.WARN and result.summary.startswith("tensorboard 2.19.0 requires setuptools>=41.0.0")
    assert any("setuptools is not installed): the `tensorboard` command" in d for d in result.details)
    assert commands(result, facts) == [[ENV_PYTHON, "-m", "pip", "install", "--", "setuptools>=41.0.0,<82",
                                        "tensorflow-cpu==2.21.0"]]
    del facts["python"]["distribution_count"]  # a hand-written or partial list says nothing of what it leaves out
    assert run(facts).status is Status.PASS


def test_unmet_pins_and_a_stranded_importer_are_repaired_in_one_step():
    # the unmet pin's install alone would leave the newest setuptools: the provider's bound joins the same step
    facts = tensorboard_beside("2.20.0", "84.2.1", {"protobuf": "5.28.0"})
    result = run(facts)
    assert result.status is Status.WARN and result.summary.startswith("protobuf 5.28.0")
    assert any("imports pkg_resources" in d for d in result.details)
    assert commands(result, facts) == [[ENV_PYTHON, "-m", "pip", "install", "--", "protobuf<8.0.0,>=6.31.1",
                                        "setuptools<82", "tensorflow-cpu==2.21.0"]]


# --- a library whose own files import tensorboard, which TensorFlow 2.21 no longer brings ----------------------------

KERAS_TUNER = "linux/keras-tuner-1.4.8-beside-tensorflow-2.21-without-tensorboard.json"


def _keras_tuner(needed=("keras_tuner/src/engine/tuner.py:421",), requires=("keras",)):
    """keras-tuner as the target collector records it, its files read (collect/library_imports.py)."""
    return {"name": "keras-tuner", "version": "1.4.8", "location": "/env/site", "top_level": ["keras_tuner"],
            "requires": list(requires), "metadata_path": "/env/site/keras_tuner-1.4.8.dist-info",
            "imports": {"record_sha256": "0" * 64, "tf_keras": [], "complete": True,
                        "stack_modules": {"tensorboard": list(needed)} if needed else {}}}


def test_a_library_importing_tensorboard_undeclared_warns_with_the_tensorboard_of_tensorflows_minor():
    """keras-tuner 1.4.8 imports tensorboard.plugins.hparams in every trial and declares no tensorboard; TensorFlow
    2.21 no longer requires it (the saved report of `pip install tensorflow-cpu==2.21.0 keras-tuner`): a warning
    naming the library, the file and line, and the plan installs the tensorboard of 2.21, TensorFlow kept."""
    from tests.builders import fixture_facts

    facts = fixture_facts(KERAS_TUNER)
    result = run(facts)
    assert result.status is Status.WARN
    assert result.summary.startswith("keras-tuner 1.4.8 imports tensorboard, which tensorboard~=2.21.0 provides "
                                     "(tensorboard is not installed)")
    assert "keras_tuner/src/engine/tuner.py:421" in result.summary
    assert result.evidence["stranded_importers"] == [{"name": "keras-tuner", "version": "1.4.8", "module": "tensorboard",
                                                      "provided_by": "tensorboard~=2.21.0", "installed": None}]
    assert commands(result, facts) == [[facts["python"]["executable"], "-m", "pip",
                                        "install", "--", "tensorboard~=2.21.0", "tensorflow-cpu==2.21.0"]]


@pytest.mark.parametrize("healthy", ["tensorboard", "tb-nightly", "fallback only", "no import", "partial list"])
def test_a_library_importing_tensorboard_is_no_finding_where_it_is_provided_or_optional(healthy):
    """Healthy: tensorboard (or tb-nightly) installed, the import only inside an ImportError fallback (the reader
    records no needed line), no such import, or a list that does not say what it leaves out."""
    extra = [_keras_tuner(needed=() if healthy in ("fallback only", "no import") else ("a.py:1",))]
    if healthy in ("tensorboard", "tb-nightly"):
        extra.append({"name": healthy, "version": "2.21.0", "location": ENV_SITE, "top_level": ["tensorboard"]})
    facts = tensorflow_environment(tensorflow=IMPORTED, extra=extra)
    if healthy == "partial list":
        del facts["python"]["distribution_count"]
    result = run(facts)
    assert result.status is Status.PASS, result.summary
    assert "stranded_importers" not in result.evidence


def test_a_declared_tensorboard_is_the_unmet_pin_and_tensorflow_beyond_the_table_gets_the_bare_name():
    from tfdoctor.facts import module_providers

    declared = tensorflow_environment(tensorflow=IMPORTED, extra=[_keras_tuner(requires=("keras", "tensorboard"))])
    result = run(declared)
    assert result.summary == "keras-tuner 1.4.8 requires tensorboard, which is not installed"
    assert module_providers.undeclared_stack_importers(declared) == []
    # a TensorFlow whose minor the companion table holds no tensorboard of: pip picks the newest
    newer = tensorflow_environment(tf_version="2.99.0", extra=[_keras_tuner()])
    [found] = module_providers.undeclared_stack_importers(newer)
    assert (found.name, found.provider.provided_by) == ("keras-tuner", "tensorboard")
    # an older TensorFlow's line where the table has it
    older = tensorflow_environment(tf_version="2.19.0", extra=[_keras_tuner()])
    assert [f.provider.provided_by for f in module_providers.undeclared_stack_importers(older)] == ["tensorboard~=2.19.0"]


def test_explain_of_the_saved_keras_tuner_report_reaches_the_same_verdict_and_plan():
    """The finding is a pure function of the recorded `imports`: a saved report explained again says the same."""
    from tfdoctor.api import explain
    from tfdoctor.report.run import RunReport
    from tfdoctor.diagnosis import doctor
    from tests.builders import fixture_facts

    facts = fixture_facts(KERAS_TUNER)
    report = RunReport(facts=facts, results=run_checks(doctor.selected_checks(deep=False), facts))
    saved = json.loads(json.dumps(report.to_dict()))
    again = explain(saved, redact=False).to_dict()
    [dependencies] = [r for r in again["results"] if r["id"] == "dependencies"]
    assert dependencies["status"] == "warn" and "keras_tuner/src/engine/tuner.py:421" in dependencies["summary"]
    assert {r["id"]: (r["status"], r["summary"]) for r in again["results"]} == {
        r["id"]: (r["status"], r["summary"]) for r in saved["results"]}
    assert again["plan"] == saved["plan"] and "tensorboard~=2.21.0" in json.dumps(saved["plan"])
