"""`import tensorflow` breaking in every known way, with fake tensorflow packages on PYTHONPATH and the
doctor run as a real subprocess (`python -m tfdoctor --json`): a complete report with the right
finding, the exit-code contract, and no process left behind."""

from __future__ import annotations

import re

import subprocess
import sys

import pytest

from tests import fakes
from tfdoctor.facts import signatures

MINE = ("--only", "tensorflow-import,gpu-visible,probe")
# An import failure the doctor cannot name runs the offline experiments, whose trials (PYTHONPATH unset) import the
# test setup's real TensorFlow: up to their 30 s budget a case, most of this module's time on a loaded machine. Tests
# whose subject is the child's record and the finding leave them out; the unnamed SIGSEGV keeps them (experiments
# beside a crashing fake, nothing left running), as does tests/cli/test_cli_experiments.py.
NO_EXPERIMENTS = ("--no-experiments",)


def _import_result(run: fakes.DoctorRun) -> dict:
    assert run.report is not None, run.stderr
    assert fakes.survivors(run.pids) == [], "a process the fake started outlived the doctor"
    return run.result("tensorflow-import")


@pytest.mark.parametrize("signal_name, signature", [("SIGILL", "illegal-instruction"), ("SIGSEGV", None)])
def test_import_dies_of_a_signal(tmp_path, signal_name, signature):
    body = fakes.dies_of("SIGILL") if signal_name == "SIGILL" else fakes.SEGFAULT
    run = fakes.run_doctor(fakes.install(tmp_path, body), *MINE, *(NO_EXPERIMENTS if signature else ()))
    result = _import_result(run)
    assert run.returncode == 1
    assert run.tensorflow["status"] == "crashed" and run.tensorflow["signal"] == signal_name
    assert run.tensorflow["stage"] == "importing" and run.tensorflow["imported"] is False
    assert result["status"] == "fail" and signal_name in result["summary"]
    assert (result["evidence"]["signatures"][:1] == [signature]) if signature else True
    # faulthandler's stack names the module that was being imported
    assert any("tensorflow/__init__.py" in line for line in result["details"])
    assert run.result("gpu-visible")["status"] == "skip" and run.result("probe")["status"] == "skip"


def test_import_aborts_on_a_duplicate_metal_platform(tmp_path):
    line = ('F tensorflow/c/experimental/stream_executor/stream_executor.cc:808] Non-OK-status: '
            'stream_executor::MultiPlatformManager::RegisterPlatform( std::move(cplatform)) status: INTERNAL: '
            'platform is already registered with name: "METAL"')  # https://github.com/pleonard212/pix-plot/issues/268
    run = fakes.run_doctor(fakes.install(tmp_path, fakes.aborts_after(line)), *MINE)
    result = _import_result(run)
    assert run.returncode == 1 and run.tensorflow["signal"] == "SIGABRT"
    assert result["evidence"]["signatures"][0] == "metal-plugin-loaded-twice"
    # the fix is a repair of the report's plan: uninstall the plugin
    assert [(r["action"], r["packages"]) for r in result["remediation"]["repairs"]] == [("uninstall", ["tensorflow-metal"])]
    steps = [run.report["plan"]["steps"][n - 1]["command"] for n in result["remediation"]["plan_steps"]]
    # pip's spelling in a pip-made venv, uv's in a uv-made one (the test environment may be either)
    assert len(steps) == 1 and ("-m pip uninstall -y -- tensorflow-metal" in steps[0]
                                or re.search(r"^uv pip uninstall --python \S+ -- tensorflow-metal$", steps[0])), steps


def test_import_aborts_in_the_cpu_feature_guard(tmp_path):
    line = ("F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use AVX "
            "instructions, but these aren't available on your machine.")  # https://github.com/scale-lab/DRiLLS/issues/9
    run = fakes.run_doctor(fakes.install(tmp_path, fakes.aborts_after(line)), *MINE, *NO_EXPERIMENTS)
    result = _import_result(run)
    assert run.tensorflow["signal"] == "SIGABRT"
    assert result["status"] == "fail" and result["evidence"]["signatures"][0] == "cpu-without-avx-message"


def test_import_hangs_and_is_killed_at_the_timeout_with_its_helpers(tmp_path):
    run = fakes.run_doctor(fakes.install(tmp_path, fakes.HANGS), "--timeout", "3")
    result = _import_result(run)
    assert len(run.pids) == 2  # the child and the helper it started: both gone (checked above)
    assert run.returncode == 1
    assert run.tensorflow["status"] == "timed_out" and run.tensorflow["timed_out"] is True
    assert run.tensorflow["duration_s"] < 3 + 2.0  # the finding arrives at the timeout (issue: "plus a second or two")
    assert result["status"] == "fail" and "did not finish within 3 s" in result["summary"]
    assert "importtime" in " ".join(result["remediation"]["commands"])
    # faulthandler dumped the stack before the kill: it shows where the import waits
    assert any("Timeout" in line or "tensorflow/__init__.py" in line for line in result["details"])
    # the whole report is there: every check has a verdict
    assert {r["id"] for r in run.report["results"]} >= {"tensorflow-import", "gpu-visible", "probe", "memory"}


IMPORT_EXAMPLES = [(s.id, text) for s in signatures.signatures() if s.phase == "import" and s.patterns
                   for text in s.examples]
# One real child per signature, raising its longest example (the likeliest to be cut on the way): the child records
# every example's text the same way; each example's own path from the recorded exception to its signature is the
# next test's, without a child (47 children were half of this module's time, most of it their experiments)
CHILD_EXAMPLES = list({sid: text for sid, text in sorted(IMPORT_EXAMPLES, key=lambda pair: len(pair[1]))}.items())


def test_every_import_example_raised_is_found_from_the_recorded_exception():
    """What the child records of an ImportError (its type and message, tfdoctor/child) reaches the example's own
    signature first, for every import example: the exception route (test_signatures tests the stderr route)."""
    for signature_id, text in IMPORT_EXAMPLES:
        found = signatures.find({"exception": {"type": "ImportError", "message": text}}, phases=("import",))
        assert found and found[0].signature.id == signature_id and found[0].where == "exception", (signature_id, text)


@pytest.mark.parametrize("signature_id, text", CHILD_EXAMPLES, ids=[sid for sid, _ in CHILD_EXAMPLES])
def test_import_raises_each_real_error_text(tmp_path, monkeypatch, signature_id, text):
    # in process: one real child per signature, the command line around it is the other tests' subject. No experiments
    # (NO_EXPERIMENTS: 30 s of 37 a case on a loaded machine)
    run = fakes.diagnose_in_process(fakes.install(tmp_path, fakes.raises(text)), monkeypatch, MINE[1].split(","),
                                    experiments=False)
    result = _import_result(run)
    assert run.returncode == 1
    assert run.tensorflow["status"] == "import_error"
    assert run.tensorflow["exception"]["type"] == "ImportError"
    assert result["status"] == "fail"
    assert result["evidence"]["signatures"][0] == signature_id


def test_ten_megabytes_of_stderr_leave_a_bounded_report_with_the_finding(tmp_path):
    first = ("F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use AVX "
             "instructions, but these aren't available on your machine.")
    body = fakes.floods_stderr(10, first, "os.abort()\n")
    run = fakes.run_doctor(fakes.install(tmp_path, body), *MINE, *NO_EXPERIMENTS)
    result = _import_result(run)
    tf = run.tensorflow
    assert tf["stderr_bytes"] > 10 * 1000 * 1000
    assert len(tf["stderr_tail"]) <= 48 * 1024 and len(tf["stderr_head"]) <= 16 * 1024
    assert len(run.stdout) < 1_000_000
    assert result["evidence"]["signatures"][0] == "cpu-without-avx-message"


def test_ten_megabytes_of_stderr_from_a_working_tensorflow(tmp_path):
    body = fakes.floods_stderr(10, "I noise", "") + (fakes.HERE / "functional_tensorflow.py").read_text()
    run = fakes.run_doctor(fakes.install(tmp_path, body), *MINE, "--no-probe")
    result = _import_result(run)
    assert run.returncode == 0 and result["status"] == "pass"
    assert run.tensorflow["stderr_bytes"] > 10 * 1000 * 1000


def test_not_installed_skips_the_import_check(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    run = fakes.run_doctor(tmp_path, *MINE, "--python", python)
    assert run.tensorflow["status"] == "not_installed"
    assert run.result("tensorflow-import")["status"] == "skip"
    assert run.result("gpu-visible")["status"] == "skip" and run.result("probe")["status"] == "skip"
    assert run.returncode == 0


@pytest.mark.parametrize("make", ["true", "shell-script", "sh"])
def test_python_that_is_not_python_exits_2_with_one_line(tmp_path, make):
    if make == "shell-script":
        target = tmp_path / "notpython.sh"
        target.write_text("#!/bin/sh\necho hello\n")
        target.chmod(0o755)
    else:
        target = "/bin/true" if make == "true" else "/bin/sh"
    run = fakes.run_doctor(tmp_path, "--python", str(target))
    assert run.returncode == 2 and run.report is None
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tfdoctor: error:"), run.stderr
    assert "not a Python interpreter" in lines[0]


def test_temporary_files_the_child_leaves_do_not_reach_the_users_temporary_directory(tmp_path):
    """AutoGraph writes a source file per converted function into the temporary directory and removes it
    at exit, which the child (leaving by os._exit) never reaches: the child's temporary directory is the
    run's scratch directory, removed with it."""
    users_temp = tmp_path / "users-temp"
    users_temp.mkdir()
    body = ("import tempfile\n"
            "with tempfile.NamedTemporaryFile('w', suffix='-autograph-like.py', delete=False) as left:\n"
            "    left.write('def converted(): pass\\n')\n"
            + (fakes.HERE / "functional_tensorflow.py").read_text(encoding="utf-8"))
    run = fakes.run_doctor(fakes.install(tmp_path / "fake", body), *MINE, extra_env={"TMPDIR": str(users_temp)})
    assert run.tensorflow["imported"] is True, run.stderr[-2000:]
    assert sorted(p.name for p in users_temp.iterdir()) == []
