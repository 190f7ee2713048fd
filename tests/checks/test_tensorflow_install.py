"""The tensorflow-install check: nothing installed, shims and their real packages, two builds at once, NumPy and
Keras against TensorFlow's pins."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tfdoctor.checks.tensorflow_install import tensorflow_install
from tfdoctor.results.model import Status

from tests.builders import MAC_USER_SITE, MAC_VENV, check_result, fix_text, linux, mac, site_distribution


def planned(result, facts) -> list[str]:
    """The plan steps tensorflow-install's repairs make (it writes no install command itself)."""
    from tfdoctor.plan.planner import build_plan

    assert not any(" -m pip " in command for command in result.remediation.commands)
    return [step.command for step in build_plan([result], facts).steps]


def test_nothing_installed_on_linux_fails_with_the_install_command():
    facts = linux()
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL
    assert result.remediation.commands == ()
    assert planned(result, facts) == ["/srv/venv/bin/python -m pip install -- tensorflow"]


def test_nothing_installed_on_a_python_without_wheels_creates_a_new_environment():
    facts = linux(version="3.15.0")
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL
    # the new environment is the user's to make; nothing is installed into this one
    assert result.remediation.commands == ("python3.12 -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")
    assert "No TensorFlow wheel exists for Python 3.15.0" in result.remediation.advice
    assert planned(result, facts) == []


def test_nothing_installed_on_apple_silicon_installs_the_gpu_pair():
    facts = mac()
    result = check_result(tensorflow_install, facts)
    assert planned(result, facts) == [f"{MAC_VENV}/bin/python -m pip install -- 'tensorflow==2.19.*' 'tensorflow-metal==1.2.0'"]


def test_nothing_installed_under_rosetta_never_pip_installs_there():
    result = check_result(tensorflow_install, mac(machine="x86_64", translated="1"))
    assert result.status is Status.FAIL and "arch -arm64" in fix_text(result)


def test_dev_venv_passes():
    """The interpreter running these tests: tensorflow-cpu + keras 3 + numpy 2 must pass (when installed)."""
    from tfdoctor.child import source

    out = subprocess.run([sys.executable, "-c", source("target_info")], capture_output=True, text=True, timeout=60)
    described = json.loads(out.stdout.strip().splitlines()[-1])
    names = {d["name"] for d in described["distributions"]}
    if not names & {"tensorflow", "tensorflow-cpu"}:
        pytest.skip("no TensorFlow in this interpreter")
    facts = {"host": {"system": "Linux", "machine": "x86_64"}, **described, "environment": dict(os.environ)}
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.PASS, result.summary


def test_shim_without_its_real_package_fails():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.15.0")]
    facts["python"]["distribution_count"] = 1  # the collector's complete list: what it lacks is not installed
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL and "only a shim for tensorflow-macos" in result.summary
    assert planned(result, facts) == [f"{MAC_VENV}/bin/python -m pip install -- 'tensorflow-macos==2.15.0'"]


def test_shim_and_target_at_different_versions_fail():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.14.0"), site_distribution("tensorflow-macos", "2.13.0")]
    assert "differ" in check_result(tensorflow_install, facts).summary


def test_shim_pair_of_2_16_is_normal():
    facts = mac(version="3.12.2")
    facts["distributions"] = [site_distribution("tensorflow", "2.16.2"), site_distribution("tensorflow-macos", "2.16.2"), site_distribution("keras", "3.3.3"),
                              site_distribution("numpy", "1.26.4")]
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.PASS
    assert "tensorflow-macos 2.16.2 is the shim for tensorflow" in " ".join(result.details)


def test_recorded_files_beat_the_knowledge_table():
    facts = mac()  # a community 2.15 build is real although PyPI's arm64 2.15 is a shim
    facts["distributions"] = [site_distribution("tensorflow", "2.15.0", top_level=["tensorflow"]), site_distribution("numpy", "1.26.4"),
                              site_distribution("keras", "2.15.0")]
    assert check_result(tensorflow_install, facts).status is Status.PASS


def test_a_shim_is_recognised_from_its_requires_when_the_table_has_no_row():
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", "2.99.0", top_level=[],
                                   requires=['tensorflow-intel ==2.99.0 ; platform_system == "Windows"'])]
    facts["python"]["distribution_count"] = 1
    assert "only a shim for tensorflow-intel" in check_result(tensorflow_install, facts).summary


def test_a_partial_list_without_the_shims_target_is_not_proof_it_is_missing():
    # fixtures/fresh/windows-tensorflow-io-gcs-filesystem-0.31-is-fine (79581): a thread's report lists tensorflow
    # 2.18.0 (on Windows a shim for tensorflow-intel) but not tensorflow-intel; the thread shows it works
    facts = {"host": {"system": "Windows", "machine": "AMD64"}, "python": {"machine": "AMD64", "version": "3.10.0"},
             "distributions": [{"name": "tensorflow", "version": "2.18.0"},
                               {"name": "tensorflow-io-gcs-filesystem", "version": "0.31.0"}]}
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.PASS, result.summary
    assert any("does not list" in d for d in result.details)
    # the same list when TensorFlow's import failed: the missing real build is the explanation
    facts["tensorflow"] = {"status": "import_error", "imported": False}
    assert "only a shim for tensorflow-intel" in check_result(tensorflow_install, facts).summary
    # ... unless the import failed inside TensorFlow's own package code: its files are there (tensorflow#66588)
    facts["tensorflow"]["exception"] = {"type": "ImportError", "message": "DLL load failed while importing _pywrap_tf2: "
                                        "Произошел сбой в программе инициализации библиотеки динамической компоновки (DLL).",
                                        "traceback": ["    from tensorflow.python.platform import _pywrap_tf2"]}
    assert check_result(tensorflow_install, facts).status is Status.PASS
    del facts["tensorflow"]["exception"]
    # a list naming no TensorFlow at all beside a child that imported it (aside6's SLEAP report): not "not installed"
    listed = facts["distributions"]
    facts["distributions"] = [{"name": "sleap", "version": "1.3.3"}]
    facts["tensorflow"] = {"status": "ok", "imported": True, "version": None}
    assert check_result(tensorflow_install, facts).status is Status.PASS
    facts["distributions"] = listed
    # and the collector's complete list
    del facts["tensorflow"]
    facts["python"]["distribution_count"] = 2
    assert check_result(tensorflow_install, facts).status is Status.FAIL


def test_one_name_twice_at_two_versions_fails():
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1", MAC_USER_SITE), site_distribution("tensorflow", "2.19.0"),
                              site_distribution("numpy", "1.26.4"), site_distribution("keras", "3.3.3")]
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL and "installed 2 times" in result.summary


@pytest.mark.parametrize("tf, numpy, needle", [
    ("2.15.0", "2.0.1", "numpy<2"),              # TF built for NumPy 1
    ("2.13.0", "1.21.6", ">=1.22,<=1.24.3"),     # older than TF's C API needs
])
def test_numpy_outside_tensorflow_pins_fails(tf, numpy, needle):
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", tf), site_distribution("numpy", numpy), site_distribution("keras", f"{tf[:4]}.0")]
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL and needle in " ".join(planned(result, facts))


def test_numpy_2_with_tensorflow_2_18_passes():
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", "2.18.0"), site_distribution("numpy", "2.0.2"), site_distribution("keras", "3.6.0")]
    assert check_result(tensorflow_install, facts).status is Status.PASS


def test_keras_3_with_tensorflow_2_15_fails():
    facts = linux()
    facts["distributions"] = [site_distribution("tensorflow", "2.15.0"), site_distribution("numpy", "1.26.4"), site_distribution("keras", "3.0.5")]
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL
    assert planned(result, facts) == ["/srv/venv/bin/python -m pip install -- 'keras>=2.15.0,<2.16' 'tensorflow==2.15.0'"]


def test_legacy_keras_switch_without_tf_keras_fails():
    facts = linux()
    facts["environment"] = {"TF_USE_LEGACY_KERAS": "1"}
    facts["distributions"] = [site_distribution("tensorflow", "2.16.1"), site_distribution("numpy", "1.26.4"), site_distribution("keras", "3.3.3")]
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL
    # the tf-keras release made for TensorFlow 2.16 (companion table); `tensorflow` is installed, so no --no-deps
    assert [(r.action.value, r.packages) for r in result.remediation.repairs] == [("install", ("tf-keras==2.16.0",))]
    assert planned(result, facts) == ["/srv/venv/bin/python -m pip install -- 'tf-keras==2.16.0' 'tensorflow==2.16.1'"]


def test_tensorflow_without_a_wheel_for_this_python_warns():
    facts = linux(version="3.9.18")
    facts["distributions"] = [site_distribution("tensorflow", "2.21.0"), site_distribution("numpy", "2.1.0"), site_distribution("keras", "3.12.0")]
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.WARN and "Python 3.10-3.13" in result.summary


def test_a_release_candidate_the_table_does_not_keep_is_not_claimed_to_have_no_wheel():
    """tensorflow 2.16.0rc0 has macOS arm64 wheels on PyPI (tensorflow-2.16.0rc0-cp311-cp311-macosx_12_0_arm64.whl,
    https://pypi.org/project/tensorflow/2.16.0rc0/#files); the release table keeps only pre-releases ahead of the
    newest final one, so its absence there proves nothing (issue 29)."""
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.16.0rc0", requires=[]),
                              site_distribution("numpy", "1.26.4")]
    result = check_result(tensorflow_install, facts)
    assert "PyPI has no" not in " ".join([result.summary, *result.details])


def test_a_final_release_missing_from_the_table_is_still_named():
    """The rule stays for final releases: tensorflow 2.5.3 has no macOS arm64 wheel at all (arm64 starts with
    tensorflow-macos, and `tensorflow` itself at 2.13: https://pypi.org/project/tensorflow/2.5.3/#files)."""
    facts = mac()
    facts["distributions"] = [site_distribution("tensorflow", "2.5.3", requires=[]),
                              site_distribution("numpy", "1.19.5")]
    result = check_result(tensorflow_install, facts)
    assert "PyPI has no tensorflow 2.5.3 wheel for macos-arm64" in " ".join([result.summary, *result.details])


def test_a_report_without_python_is_still_judged_and_pip_picks_the_wheel():
    """aside6 (scored before this change): an Apple silicon report holding only the host and an empty list, the
    Python not given. TensorFlow is not installed; without a Python version pip picks the wheel (no 'Python None')."""
    facts = {"host": {"system": "Darwin", "machine": "arm64"}, "distributions": []}
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL and result.summary == "TensorFlow is not installed"
    assert [r.packages for r in result.remediation.repairs] == [("tensorflow",)]
    assert "None" not in " ".join(result.details) + result.remediation.advice


@pytest.mark.parametrize("system, machine, words", [
    ("Windows", "ARM64", "WSL2"),     # Windows on Arm: Linux aarch64 wheels under WSL2
    ("Linux", "armv7l", "64-bit"),    # a 32-bit Raspberry Pi OS
])
def test_no_install_is_planned_where_pypi_has_no_wheel_and_the_way_out_is_said(system, machine, words):
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks
    from tests.plan_support import plan_of

    facts = {"host": {"system": system, "machine": machine}, "python": {"machine": machine, "version": "3.12.1"},
             "distributions": [], "tensorflow": {"status": "not_installed", "imported": False}}
    results = run_checks([c for c in all_checks() if c.id in ("platform-support", "tensorflow-install")], facts)
    assert [r.status for r in results] == [Status.FAIL, Status.FAIL]
    assert words in results[0].remediation.advice
    assert f"{system} {machine}" in results[1].details[0]
    assert not plan_of(facts, results).steps  # `pip install tensorflow` finds no wheel here: no such step


def test_a_conda_build_where_pypi_has_no_wheel_is_not_warned_about():
    # fixtures/fresh/aside7 (an Intel Mac, October 2024): conda-forge's TensorFlow 2.17.0, which works; PyPI's
    # x86_64 macOS wheels end at 2.16.2, which says nothing against a build conda made
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks

    def judged(installer):
        facts = {"host": {"system": "Darwin", "machine": "x86_64"},
                 "python": {"version": "3.10", "machine": "x86_64", "conda": True},
                 "distributions": [{"name": "tensorflow", "version": "2.17.0", "installer": installer}],
                 "tensorflow": {"status": "ok", "imported": True, "version": "2.17.0"}}
        return run_checks([c for c in all_checks() if c.id == "tensorflow-install"], facts)[0]

    conda = judged("conda")
    assert conda.status is Status.PASS, conda.summary
    assert any("installed by conda" in d for d in conda.details)
    assert judged("pip").status is Status.WARN  # a pip install of it came from somewhere else: worth saying


# ------------------------------------------------------------------ wheels built for another Python (issue 38 item 4)

TF_CP312 = "cp312-cp312-manylinux_2_27_x86_64"


def _tagged(tensorflow: dict | None = None, **tags: list[str]) -> dict:
    """tensorflow-cpu 2.21.0 on Python 3.11 (tests/builders.py), its distributions carrying these WHEEL tags
    (keyword: the name with '_' for '-')."""
    from tests.builders import tensorflow_environment

    facts = tensorflow_environment(tensorflow=tensorflow)
    for entry in facts["distributions"]:
        entry["installer"] = "pip"
        if entry["name"].replace("-", "_") in tags:
            entry["wheel_tags"] = tags[entry["name"].replace("-", "_")]
    return facts


def test_tensorflow_built_for_python_3_12_in_3_11_fails_and_the_plan_reinstalls_it_for_3_11():
    facts = _tagged(tensorflow_cpu=[TF_CP312])
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL
    assert result.summary == ("tensorflow-cpu's files were built for CPython 3.12 (WHEEL tag "
                              "cp312-cp312-manylinux_2_27_x86_64) but this environment runs Python 3.11")
    assert result.evidence["foreign_builds"] == [{"name": "tensorflow-cpu", "version": "2.21.0", "tags": [TF_CP312],
                                                  "built_for": "CPython 3.12"}]
    assert planned(result, facts) == ["/env/bin/python -m pip install --force-reinstall --no-deps -- 'tensorflow-cpu==2.21.0'"]


def test_every_foreign_compiled_distribution_is_reinstalled_in_one_step():
    facts = _tagged(tensorflow_cpu=[TF_CP312], numpy=["cp312-cp312-manylinux_2_27_x86_64"],
                    h5py=["cp311-cp311-manylinux_2_17_x86_64"])
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL and "(and 1 more)" in result.summary
    assert any("also numpy's files were built for CPython 3.12" in d for d in result.details)
    assert planned(result, facts) == ["/env/bin/python -m pip install --force-reinstall --no-deps -- "
                                      "'tensorflow-cpu==2.21.0' 'numpy==2.4.6'"]


def test_a_foreign_build_beside_a_tensorflow_that_imports_is_a_warning():
    from tests.builders import IMPORTED

    facts = _tagged(dict(IMPORTED), numpy=["cp310-cp310-manylinux_2_17_x86_64"])
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.WARN and result.summary.startswith("numpy's files were built for CPython 3.10")


def test_healthy_wheel_tags_get_no_warning():
    """abi3, pure Python, this Python's own tags, manylinux of another glibc: tensorflow-install passes, no plan."""
    facts = _tagged(tensorflow_cpu=["cp311-cp311-manylinux_2_27_x86_64"], protobuf=["cp310-abi3-manylinux2014_x86_64"],
                    numpy=["cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"],
                    h5py=["cp311-cp311-musllinux_1_2_x86_64"], keras=["py3-none-any"],
                    ml_dtypes=["py3-none-manylinux2014_x86_64"])
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.PASS and result.remediation is None, result.summary
    assert "foreign_builds" not in result.evidence


def test_the_recorded_cp312_wheel_in_python_3_11_fails_naming_the_tag_and_reinstalls_for_3_11():
    """The real environment's report (fixtures/linux/tensorflow-2.21-cp312-wheel-in-python-3.11.json): the finding
    names the WHEEL tag and the Python, and the one plan step reinstalls the same release under the venv's Python."""
    from tests.builders import fixture_facts

    facts = fixture_facts("linux/tensorflow-2.21-cp312-wheel-in-python-3.11.json")
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL
    assert result.summary == ("tensorflow-cpu's files were built for CPython 3.12 (WHEEL tag "
                              "cp312-cp312-manylinux_2_27_x86_64) but this environment runs Python 3.11")
    assert planned(result, facts) == [
        "/srv/tf-py311/bin/python -m pip install --force-reinstall --no-deps -- 'tensorflow-cpu==2.21.0'"]
    # the same facts, the TensorFlow wheel recorded for this Python: nothing to say
    facts["distributions"] = [dict(d, wheel_tags=["cp311-cp311-manylinux_2_27_x86_64"]) if d["name"] == "tensorflow-cpu"
                              else d for d in facts["distributions"]]
    assert check_result(tensorflow_install, facts).status is Status.PASS


def test_a_foreign_tensorflow_whose_release_has_no_wheel_for_this_python_moves_instead_of_a_reinstall():
    """tensorflow-cpu 2.21.0 (Python 3.10-3.13) with cp312 files in Python 3.9: a reinstall of 2.21.0 cannot work
    here, so the finding carries the move to the release pip installs for 3.9, and the foreign NumPy's reinstall."""
    from tests.builders import tensorflow_environment

    facts = tensorflow_environment(python="3.9.18")
    facts["distributions"][0]["wheel_tags"] = [TF_CP312]
    next(d for d in facts["distributions"] if d["name"] == "numpy")["wheel_tags"] = ["cp312-cp312-manylinux_2_27_x86_64"]
    result = check_result(tensorflow_install, facts)
    assert result.status is Status.FAIL and result.summary.startswith("tensorflow-cpu's files were built for CPython 3.12")
    commands = planned(result, facts)
    assert not any("'tensorflow-cpu==2.21.0'" in command for command in commands), commands
    assert any("uninstall" in command and "tensorflow-cpu" in command for command in commands), commands
    assert any("--force-reinstall --no-deps -- 'numpy==2.4.6'" in command for command in commands), commands
