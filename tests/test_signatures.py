"""Failure signatures: each real error text (verbatim from a public report, with its URL) leads to
its diagnosis; the table is well formed; harmless noise is not flagged where no GPU is expected."""

from __future__ import annotations

import re

import pytest

from tfdoctor.facts import Facts, signatures
from tfdoctor.model import Status
from tests.plan_support import as_result, intents, plan_of
from tests.import_support import REAL_TEXTS



@pytest.mark.parametrize("text, source, expected", REAL_TEXTS,
                         ids=[f"{e}-{i}" for i, (_, _, e) in enumerate(REAL_TEXTS)])
def test_real_text_is_diagnosed(text, source, expected):
    found = signatures.match_text(text)
    assert found, f"nothing matched the text from {source}"
    assert found[0].signature.id == expected


def test_there_are_at_least_twelve_signatures_with_sources():
    rows = signatures.signatures()
    assert len(rows) >= 12
    for row in rows:
        assert row.source.strip() and isinstance(row.verified, bool)
        assert row.phase in signatures.PHASES
        assert row.patterns or row.signals, row.id
        assert row.examples, f"{row.id} has no example text"
        assert re.match(r"^[a-z0-9.]+(-[a-z0-9.]+)*$", row.id)
    assert len({row.id for row in rows}) == len(rows)


@pytest.mark.parametrize("row", signatures.signatures(), ids=lambda row: row.id)
def test_each_example_matches_its_own_row_first(row):
    for example in row.examples:
        signal = row.signals[0] if row.signals and not row.patterns else None
        found = signatures.match_text(example, phases=(row.phase,), signal=signal, installed=row.requires)
        assert found and found[0].signature.id == row.id, example


def test_fix_actions_are_known():
    for row in signatures.signatures():
        for step in row.fix:
            assert step.action in ("install", "uninstall", "reinstall", "fresh_environment")
            assert step.names or step.action == "fresh_environment"


def test_a_signal_alone_matches_and_requires_gates_a_row():
    assert signatures.match_text("", signal="SIGILL")[0].signature.id == "illegal-instruction"
    assert [m.signature.id for m in signatures.match_text("", signal="SIGSEGV")] == []
    with_metal = signatures.match_text("segmentation fault python3", signal="SIGSEGV", installed=["tensorflow-metal"])
    assert with_metal[0].signature.id == "crash-with-metal-plugin"


def test_a_timeout_is_not_read_as_the_signal_that_ended_it():
    assert signatures.find({"timed_out": True, "signal": "SIGKILL", "stderr_tail": ""}, phases=signatures.PHASES) == []


def test_the_exception_chain_and_traceback_are_searched():
    tf = {"exception": {"type": "ImportError", "message": "Failed to load the native TensorFlow runtime.",
                        "causes": [{"type": "ImportError", "message": "(mach-o file, but is an incompatible "
                                    "architecture (have (x86_64), need (arm64e)))"}]}}
    found = signatures.find(tf)
    assert found[0].signature.id == "mixed-architectures" and found[0].where == "exception"


def test_noise_is_not_flagged_where_no_gpu_is_expected():
    # on a CPU-only machine a CUDA build prints these, harmlessly (https://github.com/tensorflow/tensorflow/issues/62328,
    # https://github.com/tensorflow/tensorflow/issues/74459, https://github.com/kr-colab/ReLERNN/issues/63)
    lines = ("I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used.\n"
             "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
             "'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
             "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: "
             "Attempting to register factory for plugin cuDNN when one has already been registered")
    tf = {"stderr_tail": lines}
    assert signatures.find(tf, phases=("gpu",), gpu_expected=False) == []
    expected = [m.signature.id for m in signatures.find(tf, phases=("gpu",), gpu_expected=True)]
    assert expected == ["cuda-libraries-missing", "cuda-driver-not-found"]


def test_notable_lines_cover_every_pattern_and_the_metal_startup():
    pattern = signatures.notable_pattern()
    for row in signatures.signatures():
        for example in row.examples:
            if row.patterns:
                assert pattern.search(example.encode()), row.id
    metal = b"2024-01-11 11:39:24.910238: I metal_plugin/src/device/metal_device.cc:1154] Metal device set to: Apple M3 Pro"
    assert pattern.search(metal)  # https://github.com/msusol/jupyter-notebook-on-macos/blob/main/tensorflow.md


# ------------------------------------------------------------------ the checks read the signatures

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
    assert [step.command for step in plan.steps] == ["/venv/bin/python -m pip uninstall -y tensorflow-metal"]


@pytest.mark.parametrize("tf_version, command", [
    ("2.19.0", "/venv/bin/python -m pip install 'tensorflow-metal==1.2.0' 'tensorflow==2.19.0'"),  # blog-tf219-metal110-symbol's fix
    ("2.17.0", "/venv/bin/python -m pip uninstall -y tensorflow-metal"),
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
