"""The tensorflow-import check: what the TensorFlow child's import recorded, the cause an error is tied to (real
error texts), the signature it matches, and the repair planned for it."""

from __future__ import annotations

import pytest

from tfdoctor.checks.tensorflow_import import tensorflow_import
from tfdoctor.facts import Facts
from tfdoctor.results.model import Status

from tests.builders import ENV_SITE, tensorflow_environment, tensorflow_result
from tests.import_support import (
    H5PY_FOR_NUMPY1,
    LIBRARY_MISSING,
    ML_DTYPES_TOO_OLD,
    PROTOBUF_TOO_OLD,
    REAL_TEXTS,
    UNKNOWN,
    failed_import,
    install_command,
)
from tests.plan_support import as_result, intents, plan_of


def test_import_passes_and_reports_the_build_and_plugins():
    plugin = {"path": "/site-packages/tensorflow-plugins/libmetal_plugin.dylib", "loaded": True}
    outcome = tensorflow_import.run({"host": {"system": "Darwin"},
                                     "tensorflow": tensorflow_result(plugins=[plugin], build_info={"is_cuda_build": False})})
    assert outcome.status is Status.PASS and outcome.summary == "TensorFlow 2.21.0 imported in 2.0 s"
    assert "CPU-only build (no CUDA)" in outcome.details and any("plugin loaded" in d for d in outcome.details)


def test_import_of_an_incomplete_package_directory():
    tf = {"status": "import_error", "imported": False, "stage": "import_failed", "timed_out": False,
          "spec": {"origin": None, "namespace": True, "locations": ["/site-packages/tensorflow"]},
          "exception": {"type": "AttributeError", "message": "module 'tensorflow' has no attribute '__version__'"}}
    facts = {"host": {"system": "Darwin"}, "python": {"executable": "/venv/bin/python", "in_venv": True},
             "distributions": [{"name": "tensorflow-macos", "version": "2.13.0"}], "tensorflow": tf}
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "without its __init__.py" in outcome.summary
    assert outcome.remediation.commands == ()
    assert intents(outcome) == [("reinstall", ("tensorflow-macos==2.13.0",))]
    assert [s.command for s in plan_of(facts, [as_result("tensorflow-import", outcome)]).steps] == [
        "/venv/bin/python -m pip install --force-reinstall --no-deps -- 'tensorflow-macos==2.13.0'"]


def test_protobuf_below_the_pin_names_the_pin_and_repairs_it_keeping_tensorflow():
    facts = tensorflow_environment({"protobuf": "3.20.3"}, tensorflow=PROTOBUF_TOO_OLD)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL
    assert "protobuf 3.20.3 is outside tensorflow-cpu 2.21.0's protobuf<8.0.0,>=6.31.1" in outcome.summary
    assert outcome.evidence["explained_by"] == "dependencies"
    (repair,) = outcome.remediation.repairs
    assert repair.packages == ("protobuf<8.0.0,>=6.31.1",) and repair.reason.startswith("protobuf 3.20.3 is outside")
    assert install_command(facts, outcome)[-2:] == ["protobuf<8.0.0,>=6.31.1", "tensorflow-cpu==2.21.0"]
    assert "does not know" not in outcome.remediation.advice


def test_numpy_is_not_blamed_alone_when_protobuf_breaks_too():
    # TensorFlow 2.15 with NumPy 2 and protobuf 5: the import dies of the NumPy error, but the printed fix
    # must satisfy both pins or TensorFlow stays broken after it (issue 11, "Why")
    tf215 = ["protobuf!=4.21.0,!=4.21.1,!=4.21.2,!=4.21.3,!=4.21.4,!=4.21.5,<5.0.0dev,>=3.20.3",
             "numpy<2.0.0,>=1.23.5", "ml-dtypes~=0.2.0"]
    tensorflow = failed_import("ImportError", "numpy.core.multiarray failed to import",
                               [f"{ENV_SITE}/tensorflow/__init__.py", f"{ENV_SITE}/tensorflow/python/pywrap_tensorflow.py"])
    tensorflow["stderr_tail"] = ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may "
                                 "crash. To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with "
                                 "NumPy 2.0.")
    facts = tensorflow_environment({"numpy": "2.0.0", "protobuf": "5.28.3", "ml-dtypes": "0.2.0"}, requires=tf215,
                       tf_version="2.15.1", tensorflow=tensorflow)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "numpy 2.0.0 is outside" in outcome.summary
    words = install_command(facts, outcome)
    assert "numpy<2.0.0,>=1.23.5" in words and any(w.startswith("protobuf") and "<5.0.0dev" in w for w in words)
    assert words[-1] == "tensorflow-cpu==2.15.1"


def test_ml_dtypes_and_h5py_below_their_pins():
    facts = tensorflow_environment({"ml-dtypes": "0.4.1"}, tensorflow=ML_DTYPES_TOO_OLD)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "ml-dtypes 0.4.1 is outside" in outcome.summary
    assert "ml-dtypes-missing-type" in outcome.evidence["signatures"]
    assert "ml-dtypes<1.0.0,>=0.5.1" in install_command(facts, outcome)
    facts = tensorflow_environment({"h5py": "3.8.0"}, tensorflow=H5PY_FOR_NUMPY1)
    outcome = tensorflow_import.run(facts)
    assert "h5py 3.8.0 is outside" in outcome.summary and "h5py<3.15.0,>=3.11.0" in install_command(facts, outcome)


def test_a_signature_with_every_pin_held_keeps_its_own_fix():
    # gencode 6.31.1 and runtime 5.29.3 with a TensorFlow whose metadata allows both: the error's own numbers
    tensorflow = failed_import(
        "google.protobuf.runtime_version.VersionError", "Detected mismatched Protobuf Gencode/Runtime major versions "
        "when loading tensorflow/core/framework/attr_value.proto: gencode 6.31.1 runtime 5.29.3. Same major version "
        "is required. See Protobuf version guarantees at https://protobuf.dev/support/cross-version-runtime-guarantee.",
        [f"{ENV_SITE}/tensorflow/__init__.py", f"{ENV_SITE}/google/protobuf/runtime_version.py"])
    facts = tensorflow_environment({"protobuf": "5.29.3"}, requires=["protobuf>=5.28.0"], tensorflow=tensorflow)
    outcome = tensorflow_import.run(facts)
    assert outcome.evidence["signatures"][0] == "protobuf-runtime-older-than-gencode"
    assert "explained_by" not in outcome.evidence
    assert install_command(facts, outcome)[-2:] == ["protobuf>=6.31.1,<7", "tensorflow-cpu==2.21.0"]


NP_OBJECT = ("module 'numpy' has no attribute 'object'.\n`np.object` was a deprecated alias for the builtin `object`. "
             "To avoid this error in existing code, use `object` by itself. Doing this will not modify any behavior "
             "and is safe.")  # tensorflow#62832


def test_a_numpy_alias_numpy_1_24_removed_gets_an_older_numpy_where_tensorflows_pins_admit_one():
    # TensorFlow 2.8 declares numpy>=1.20 (no cap) and uses np.object: the import suspect rule alone would offer a
    # *newer* NumPy; the error's own words say the alias was removed, so the repair is an older one
    frames = [f"{ENV_SITE}/tensorflow/python/framework/dtypes.py"]
    old = tensorflow_environment({"numpy": "1.24.3"}, tf_name="tensorflow", tf_version="2.8.0",
                                 requires=["numpy>=1.20"], tensorflow=failed_import("AttributeError", NP_OBJECT, frames))
    outcome = tensorflow_import.run(old)
    assert outcome.status is Status.FAIL and outcome.evidence["signatures"][0] == "numpy-1.24-removed-alias"
    assert install_command(old, outcome)[-2:] == ["numpy<1.24", "tensorflow==2.8.0"]
    # from 2.16 on TensorFlow needs NumPy 1.26 or later: no older NumPy is offered, the advice says what to upgrade
    new = tensorflow_environment({"numpy": "1.26.4"}, tensorflow=failed_import("AttributeError", NP_OBJECT, frames))
    newer = tensorflow_import.run(new)
    assert newer.evidence["signatures"][0] == "numpy-1.24-removed-alias"
    assert not any("numpy<1.24" in p for r in newer.remediation.repairs for p in r.packages)
    assert "upgrade that module" in newer.remediation.advice


def test_an_unknown_error_in_a_saved_report_is_tied_to_the_pins_the_release_publishes():
    # a thread's report: TensorFlow 2.15.0 beside protobuf 5.26.1 and an error no rule knows; the report records no
    # Requires-Dist, but 2.15.0's published METADATA pins protobuf<5.0.0dev: the dependencies check's finding
    facts = {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"machine": "x86_64", "version": "3.11.8"},
             "distributions": [{"name": "tensorflow", "version": "2.15.0"}, {"name": "protobuf", "version": "5.26.1"}],
             "tensorflow": {"status": "import_error", "imported": False, "exception": {
                 "type": "TypeError", "message": "Unable to convert function return value to a Python type! The "
                                                 "signature was\n\t() -> handle"}}}
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and outcome.evidence.get("explained_by") == "dependencies", outcome.summary
    assert "protobuf 5.26.1 is outside tensorflow 2.15.0's" in outcome.summary
    assert any("protobuf" in p and "<5.0.0dev" in p for r in outcome.remediation.repairs for p in r.packages)


def test_a_library_missing_from_the_install_is_reinstalled_exactly():
    integrity = {"distributions": [{"name": "tensorflow-cpu", "version": "2.21.0", "record": True, "problems": [
        {"path": "tensorflow/libtensorflow_framework.so.2", "problem": "missing", "expected_size": 40000000}]}]}
    facts = tensorflow_environment(tensorflow=LIBRARY_MISSING, integrity=integrity)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and outcome.evidence["explained_by"] == "install-integrity"
    assert "tensorflow/libtensorflow_framework.so.2 is missing" in outcome.summary
    assert install_command(facts, outcome)[-4:] == ["--force-reinstall", "--no-deps", "--", "tensorflow-cpu==2.21.0"]
    # without the integrity facts (an older report) the signature gives the same repair
    facts = tensorflow_environment(tensorflow=LIBRARY_MISSING)
    outcome = tensorflow_import.run(facts)
    assert outcome.evidence["signatures"][0] == "tensorflow-library-missing"
    assert install_command(facts, outcome)[-4:] == ["--force-reinstall", "--no-deps", "--", "tensorflow-cpu==2.21.0"]


def test_an_unknown_error_with_unmet_pins_is_tied_to_them_not_unknown():
    outcome = tensorflow_import.run(tensorflow_environment({"protobuf": "5.29.3"}, tensorflow=UNKNOWN))
    assert outcome.evidence["explained_by"] == "dependencies"
    assert "does not know" not in outcome.remediation.advice
    # a healthy environment: the error stays unknown, said plainly
    outcome = tensorflow_import.run(tensorflow_environment(tensorflow=UNKNOWN))
    assert "does not know" in outcome.remediation.advice and "explained_by" not in outcome.evidence


def test_a_file_two_builds_share_is_no_reinstall_advice():
    """tensorflow and tensorflow-cpu both list the file: reinstalling either overwrites the other again, so
    the advice keeps one (tensorflow-install's commands) and never says 'reinstall as it was'."""
    integrity = {"distributions": [{"name": "tensorflow-cpu", "version": "2.21.0", "record": True, "problems": [
        {"path": "tensorflow/libtensorflow_framework.so.2", "problem": "missing", "expected_size": 40000000,
         "also_in": ["tensorflow"]}]}]}
    facts = tensorflow_environment(tensorflow=LIBRARY_MISSING, integrity=integrity)
    outcome = tensorflow_import.run(facts)
    fix = outcome.remediation
    assert fix is not None
    assert "Reinstall" not in fix.advice and "keep one" in fix.advice, fix.advice
    # the repair keeps one of them (as install-integrity and tensorflow-install do), never a reinstall
    assert intents(outcome) == [("uninstall", ("tensorflow", "tensorflow-cpu")), ("install", ("tensorflow==2.21.0",))]
    plan = plan_of(facts, [as_result("tensorflow-import", outcome)])
    assert not any("--force-reinstall" in step.command for step in plan.steps), plan.steps


def _failed_import(text: str, **facts) -> Facts:
    tf = {"status": "import_error", "imported": False, "stage": "import_failed", "timed_out": False,
          "exception": {"type": "ImportError", "message": text}, "stderr_tail": ""}
    return {"host": {"system": facts.pop("system", "Linux")}, "tensorflow": tf,
            "python": {"executable": "/venv/bin/python", "in_venv": True}, **facts}


def test_import_check_names_the_fix_for_the_installer_in_use():
    from tfdoctor.checks.tensorflow_import import tensorflow_import

    facts = _failed_import("Library not loaded: @rpath/_pywrap_tensorflow_internal.so", system="Darwin",
                           distributions=[{"name": "tensorflow", "version": "2.20.0"},
                                          {"name": "tensorflow-metal", "version": "1.2.0"}])
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "2.20" in outcome.summary
    # the plan's steps run in order, so the other way out (back to the 2.19 pair) is advice, not a second step
    assert outcome.remediation.commands == ()
    assert intents(outcome) == [("uninstall", ("tensorflow-metal",))]
    assert "2.20" in outcome.remediation.repairs[0].reason
    assert "tensorflow-metal==1.2.0" in outcome.remediation.advice and "pip install" not in outcome.remediation.advice
    plan = plan_of(facts, [as_result("tensorflow-import", outcome)])
    assert [step.command for step in plan.steps] == ["/venv/bin/python -m pip uninstall -y -- tensorflow-metal"]


@pytest.mark.parametrize("tf_version, command", [
    ("2.19.0", "/venv/bin/python -m pip install -- 'tensorflow-metal==1.2.0' 'tensorflow==2.19.0'"),  # blog-tf219-metal110-symbol's fix
    ("2.17.0", "/venv/bin/python -m pip uninstall -y -- tensorflow-metal"),
])
def test_fix_steps_follow_the_installed_tensorflow_version(tf_version, command):
    from tfdoctor.checks.tensorflow_import import tensorflow_import

    text = REAL_TEXTS[0][0]
    facts = _failed_import(text, system="Darwin", distributions=[
        {"name": "tensorflow", "version": tf_version}, {"name": "tensorflow-metal", "version": "1.1.0"}])
    outcome = tensorflow_import.run(facts)
    assert outcome.remediation.commands == ()
    # the install keeps TensorFlow where it is: the planner pins the installed build next to it
    assert [step.command for step in plan_of(facts, [as_result("tensorflow-import", outcome)]).steps] == [command]


@pytest.mark.parametrize("text, row", [
    ("ImportError: Failed to load the native TensorFlow runtime.\n(mach-o file, but is an incompatible architecture "
     "(have (x86_64), need (arm64e)))", "mixed-architectures"),
    ("TypeError: bases must be types", "protobuf-mismatch"),
])
def test_a_fresh_environment_is_the_users_step_and_nothing_is_installed_into_the_broken_one(text, row):
    """fresh_environment rows: create and activate a new environment (manual commands); the install after it
    belongs to that environment, so no repair of this one and no pip line for it."""
    from tfdoctor.checks.tensorflow_import import tensorflow_import

    facts = _failed_import(text, distributions=[{"name": "tensorflow", "version": "2.15.0"}])
    outcome = tensorflow_import.run(facts)
    assert outcome.evidence["signatures"][0] == row
    assert outcome.remediation.commands == ("python3.12 -m venv ~/.venvs/tf", "source ~/.venvs/tf/bin/activate")
    assert outcome.remediation.repairs == ()
    assert plan_of(facts, [as_result("tensorflow-import", outcome)]).steps == ()


def test_a_reinstall_step_reinstalls_the_installed_build_exactly_with_its_installer():
    from tfdoctor.checks.tensorflow_import import tensorflow_import

    text = "libtensorflow_framework.so.2: cannot open shared object file: No such file or directory"
    facts = _failed_import(text, distributions=[{"name": "tensorflow-cpu", "version": "2.21.0", "top_level": ["tensorflow"]}])
    outcome = tensorflow_import.run(facts)
    assert outcome.evidence["signatures"] == ["tensorflow-library-missing"]
    assert intents(outcome) == [("reinstall", ("tensorflow-cpu==2.21.0",))]
    facts["integrity"] = {"distributions": [{"name": "tensorflow-cpu", "version": "2.21.0", "installer": "conda",
                                             "record": False}]}
    facts["python"].update(conda=True, in_venv=False, prefix="/opt/conda/envs/tf")
    repair = tensorflow_import.run(facts).remediation.repairs[0]
    assert (repair.packages, repair.manager, repair.prefix) == (("tensorflow-cpu==2.21.0",), "conda", "/opt/conda/envs/tf")


def test_illegal_instruction_under_rosetta_points_to_a_native_python():
    from tfdoctor.checks.tensorflow_import import tensorflow_import

    facts = {"host": {"system": "Darwin"}, "sysctl": {"hw.optional.arm64": "1"},
             "python": {"executable": "/opt/anaconda3/bin/python", "machine": "x86_64", "proc_translated": "1",
                        "conda": True},
             "tensorflow": {"status": "crashed", "signal": "SIGILL", "exit_code": -4, "stage": "importing",
                            "timed_out": False, "stderr_tail": ""}}
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "Rosetta 2" in outcome.summary
    assert any("arm64" in c for c in outcome.remediation.commands)


def test_illegal_instruction_in_a_vm_without_avx_names_the_cpu_model():
    from tfdoctor.checks.tensorflow_import import tensorflow_import

    flags = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht " \
            "syscall nx lm constant_tsc nopl xtopology hypervisor"  # IBM/MAX-Object-Detector#131 (kvm64), + hypervisor
    facts = {"host": {"system": "Linux"}, "cpu": {"flags": flags.split()},
             "tensorflow": {"status": "crashed", "signal": "SIGILL", "exit_code": -4, "stage": "importing",
                            "timed_out": False, "stderr_tail": "Illegal instruction (core dumped)"}}
    outcome = tensorflow_import.run(facts)
    assert "virtual machine" in outcome.summary and "`host`" in outcome.remediation.advice


def test_an_error_no_rule_explains_names_its_suspects_without_a_plan_step_and_fix_tries_them():
    """Issue 29: every pin holds (none recorded), no signature matches, the error names typing_extensions and its
    frames optree and keras (a thread's report). The old answer was 'does not know this error'."""
    from tfdoctor.diagnosis import doctor
    from tfdoctor.fixer import trials
    from tests.import_support import TYPE_IS, partial_report

    facts = {**partial_report(), "tensorflow": {"status": "import_error", "imported": False, "stage": "import_failed",
                                                "timed_out": False, "exception": TYPE_IS, "stderr_tail": ""}}
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL
    assert "suspect typing-extensions 4.5.0" in outcome.summary and "no rule explains it" in outcome.summary
    assert any(d.startswith("suspect: optree 0.14.0") for d in outcome.details)
    assert "typing-extensions>4.5.0" in outcome.remediation.advice and "tfdoctor --prove" in outcome.remediation.advice
    assert outcome.remediation.repairs == ()  # a hypothesis is no plan step
    result = as_result("tensorflow-import", outcome)
    assert doctor.experiment_goals(facts, [result]) == [{"kind": "import"}]  # the offline experiments still run first
    assert [c.requirement for c in trials.candidates([result])] == ["typing-extensions>4.5.0", "optree>0.14.0",
                                                                  "keras>3.8.0"]


def test_a_module_the_error_says_is_missing_is_missing_even_from_a_partial_list():
    # a thread's report lists only TensorFlow; "No module named 'ml_dtypes'" says what its list leaves out
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks
    from tests.plan_support import plan_of

    facts = {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"machine": "x86_64", "version": "3.12.3"},
             "distributions": [{"name": "tensorflow", "version": "2.18.1"}],
             "tensorflow": {"status": "import_error", "imported": False, "exception": {
                 "type": "ModuleNotFoundError", "message": "No module named 'ml_dtypes'"}}}
    results = {r.check_id: r for r in run_checks(
        [c for c in all_checks() if c.id in ("dependencies", "tensorflow-import")], facts)}
    assert results["dependencies"].status is Status.FAIL
    assert "requires ml-dtypes<1.0.0,>=0.4.0, which is not installed" in results["dependencies"].summary
    assert results["tensorflow-import"].evidence.get("explained_by") == "dependencies"
    steps = [s.command for s in plan_of(facts, list(results.values())).steps]
    assert steps == ["python3 -m pip install -- 'ml-dtypes<1.0.0,>=0.4.0' 'tensorflow==2.18.1'"]


def test_a_rocm_build_is_a_tensorflow_build_judged_on_its_releases_python_dependencies():
    # fixtures/fresh/aside8 (opendatahub-io/notebooks#2184): tensorflow-rocm 2.18.1 from AMD's repository, installed
    # without its dependencies; the pasted traceback lost the message, its last line imports ml_dtypes
    from tfdoctor.checking.registry import all_checks
    from tfdoctor.checking.runner import run_checks

    facts = {"host": {"system": "Linux", "machine": "x86_64"}, "python": {"version": "3.12"},
             "distributions": [{"name": "tensorflow-rocm", "version": "2.18.1"}],
             "tensorflow": {"status": "import_error", "imported": False, "exception": {
                 "type": "ModuleNotFoundError", "traceback": [
                     "File /opt/app-root/lib64/python3.12/site-packages/tensorflow/__init__.py:49",
                     "----> 8 from tensorflow.python.autograph.core.ag_ctx import control_status_ctx",
                     "---> 21 import ml_dtypes"]}}}
    results = {r.check_id: r for r in run_checks(
        [c for c in all_checks() if c.id in ("tensorflow-install", "dependencies", "cuda-build")], facts)}
    assert results["tensorflow-install"].status is Status.PASS, results["tensorflow-install"].summary
    assert results["cuda-build"].status is Status.SKIP and "ROCm" in results["cuda-build"].summary
    assert "requires ml-dtypes" in results["dependencies"].summary


# TensorFlow 2.21's cp312 files under Python 3.11, recorded on a real environment (the live case
# tensorflow-built-for-another-python)
OTHER_PYTHON = "linux/tensorflow-2.21-cp312-wheel-in-python-3.11.json"


def test_an_undefined_symbol_in_tensorflow_built_for_another_python_is_tied_to_its_wheel_tag():
    """Issue 38 item 4: RECORD holds, every pin holds; the WHEEL tag names CPython 3.12 in a 3.11 environment. Before,
    'tfdoctor does not know this error' and no plan."""
    from tests.builders import fixture_facts

    facts = fixture_facts(OTHER_PYTHON)
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL
    assert outcome.evidence["explained_by"] == "tensorflow-install"
    assert ("tensorflow-cpu's files were built for CPython 3.12 (WHEEL tag cp312-cp312-manylinux_2_27_x86_64) but this "
            "environment runs Python 3.11") in outcome.summary
    assert "does not know" not in outcome.remediation.advice
    assert install_command(facts, outcome)[-4:] == ["--force-reinstall", "--no-deps", "--", "tensorflow-cpu==2.21.0"]


def test_an_unknown_error_inside_tensorflows_own_files_makes_it_reinstalled_as_it_was_a_candidate():
    """Issue 38 item 3: the same report without any WHEEL tag and without the integrity child's facts (a report
    pasted from a thread: the tags unread, RECORD unchecked): no rule explains the error, and the failing file is TensorFlow's own, so `--prove` tries TensorFlow reinstalled as it was
    on a copy; no plan step (a hypothesis)."""
    from tests.builders import fixture_facts
    from tfdoctor.fixer import trials

    facts = fixture_facts(OTHER_PYTHON)
    for entry in facts["distributions"]:
        entry.pop("wheel_tags", None)
    facts.pop("installers")
    facts.pop("integrity")  # it saw the scripts --target put under site-packages/bin/: a cause of its own
    outcome = tensorflow_import.run(facts)
    assert outcome.status is Status.FAIL and "does not know" in outcome.remediation.advice
    assert outcome.remediation.repairs == ()
    (candidate,) = trials.candidates([as_result("tensorflow-import", outcome)])
    assert (candidate.requirement, candidate.reinstall) == ("tensorflow-cpu==2.21.0", True)
    assert "tensorflow-cpu 2.21.0's own files" in candidate.why
