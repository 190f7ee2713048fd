"""`tfdoctor fix` end to end, offline: a real venv holding a fake TensorFlow wheel whose declared pin is
violated, a local wheel directory standing in for the index (PIP_NO_INDEX, PIP_FIND_LINKS: pip's own
settings, which the plan's steps inherit). The fix is proven on a clone, applied, undone; a plan that
cannot work leaves the environment byte-for-byte as it was.

The real thing, with real TensorFlow environments from PyPI, is the live suite (tests/live)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixer_support import TF_VERSION, build_world, freeze as _freeze, hashes as _hashes, run as _run

DOCTOR = Path(sys.executable).with_name("tfdoctor")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """wheels/: fake tensorflow-cpu 2.21.0 (requires fakedep>=2), fakedep 1.0 and 2.0; base/: a venv with
    tensorflow-cpu and fakedep 1.0 (a violated pin; TensorFlow still imports: a warning) and NumPy and pip
    linked in from the test's own environment (tests/fixer_support.build_world)."""
    root = tmp_path_factory.mktemp("fix")
    wheels, base, env = build_world(root)
    return root, wheels, base, env


def _copy(world, name: str) -> Path:
    root, _, base, _ = world
    target = root / name
    assert _run(["cp", "-a", base, target]).returncode == 0  # a real copy: each test owns its files
    # the venv's scripts and pyvenv.cfg name no absolute prefix that matters for `python -m pip`
    return target


def _fix(env_dir: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return _run([DOCTOR, "fix", "--python", env_dir / "bin" / "python", "--only", "dependencies", *args],
                env=env)  # stdin: /dev/null (tests/fixer_support.run)


def test_fix_proves_the_plan_on_a_clone_applies_it_and_undo_restores_the_freeze(world):
    _, _, _, env = world
    target = _copy(world, "repair")
    before = _freeze(target)
    assert "fakedep==1.0" in before
    fixed = _fix(target, env, "--yes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Verified on a copy" in fixed.stdout
    assert "fakedep 1.0 -> 2.0" in fixed.stdout
    after = _freeze(target)
    assert "fakedep==2.0" in after and f"tensorflow-cpu=={TF_VERSION}" in after
    assert not list(target.parent.glob(".repair.tfdoctor-verify-*")), "the throwaway clone was left behind"
    again = _fix(target, env, "--yes")
    assert again.returncode == 0 and "Nothing to fix" in again.stdout
    undone = _run([DOCTOR, "fix", "--python", target / "bin" / "python", "--undo", "--yes"], env=env)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert _freeze(target) == before


def test_a_plan_that_fails_on_the_clone_leaves_the_environment_byte_for_byte(world, tmp_path):
    _, _, _, env = world
    target = _copy(world, "unresolvable")
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    hashes, entries = _hashes(target), sorted(target.iterdir())
    failed = _fix(target, {**env, "PIP_FIND_LINKS": str(empty)}, "--yes")  # fakedep 2.0 cannot be found
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "did not work on a copy" in failed.stdout and "untouched" in failed.stdout
    # pip's own output is read with the doctor's install signatures: fix says what it means
    assert "Why: the package index has no release of the package that installs" in failed.stdout
    assert _hashes(target) == hashes
    assert sorted(target.iterdir()) == entries, "the prefix gained or lost an entry (the lock lives in the user's cache)"


def test_fix_refuses_without_a_terminal_and_without_yes(world):
    _, _, _, env = world
    target = _copy(world, "no-terminal")
    hashes = _hashes(target)
    refused = _fix(target, env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--yes" in refused.stdout
    assert _hashes(target) == hashes


def test_a_healthy_environment_is_left_as_it_is(world):
    _, _, _, env = world
    target = _copy(world, "healthy")
    assert _run([target / "bin" / "python", "-m", "pip", "install", "fakedep==2.0"], env=env).returncode == 0
    hashes = _hashes(target)
    result = _fix(target, env, "--yes")
    assert result.returncode == 0 and "Nothing to fix" in result.stdout, result.stdout + result.stderr
    assert _hashes(target) == hashes


def test_dry_run_asks_the_resolver_and_changes_nothing(world):
    _, _, _, env = world
    target = _copy(world, "dry-run")
    hashes = _hashes(target)
    result = _fix(target, env, "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "resolves" in result.stdout and "fakedep 2.0" in result.stdout
    assert _hashes(target) == hashes


def test_ctrl_c_while_the_plan_runs_on_the_copy_removes_the_copy_and_leaves_nothing_running(world, tmp_path):
    """pip is pointed at a loopback index that accepts connections and never answers, so step 1 hangs
    on the copy; SIGINT to tfdoctor must end it at once: exit 130, the copy gone, no pip left."""
    import signal
    import socket
    import time

    import psutil

    _, _, _, env = world
    target = _copy(world, "interrupted")
    hashes = _hashes(target)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # never accepted: pip's request waits for its own timeout
    port = silent.getsockname()[1]
    hanging = {**env, "PIP_NO_INDEX": "", "PIP_FIND_LINKS": "", "PIP_INDEX_URL": f"http://127.0.0.1:{port}/simple/",
               "PIP_TIMEOUT": "120", "PIP_RETRIES": "0"}
    hanging = {k: v for k, v in hanging.items() if v != ""}
    process = subprocess.Popen([str(DOCTOR), "fix", "--python", str(target / "bin" / "python"), "--only", "dependencies",
                                "--yes"], env=hanging, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        pip = None
        while time.monotonic() < deadline and pip is None:
            for child in psutil.process_iter(["cmdline"]):
                line = " ".join(child.info["cmdline"] or ())
                if "-m pip install" in line and ".interrupted.tfdoctor-verify-" in line:
                    pip = child
            time.sleep(0.2)
        assert pip is not None, "the plan never started on the copy"
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        took = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
        silent.close()
    assert process.returncode == 130, out + err
    assert took < 10, f"tfdoctor took {took:.1f} s to stop"
    assert not pip.is_running() or pip.status() == psutil.STATUS_ZOMBIE, "pip outlived the doctor"
    assert not list(target.parent.glob(".interrupted.tfdoctor-verify-*")), "the copy was left behind"
    assert _hashes(target) == hashes


class _Said:
    """What fix tells the user (no terminal, --yes)."""

    def __init__(self):
        self.lines: list[str] = []

    def progress(self, text):
        import contextlib

        return contextlib.nullcontext()

    def say(self, text, style=""):
        self.lines.append(text)

    def plan(self, document):
        self.lines += [step["command"] for step in document.get("steps") or ()]

    def confirm(self, question):
        return True

    def can_ask(self):
        return False


def test_a_step_for_the_shell_is_proven_as_done_the_rest_applied_and_the_step_named_exit_3(world, monkeypatch):
    """Issue 29: a plan of an install and `export TF_USE_LEGACY_KERAS=1` (hub's KerasLayer under Keras 3). fix
    cannot set the user's shell variable: it proves the install on the copy and applies it with the doctor run
    as the shell will be once the export is done, names the export as left to the user and exits 3. Its own
    environment is as before afterwards. The variable's check is stood in for by one that fails until it is set."""
    from tfdoctor.fixer import flow
    from tfdoctor.results.model import CheckResult, Remediation, Status
    from tfdoctor.results.repairs import Repair
    from tfdoctor.report.run import RunReport

    _, _, _, env = world
    target = _copy(world, "shell-step")
    for name in [k for k in os.environ if k.startswith("PIP_") or k == "TF_USE_LEGACY_KERAS"]:
        monkeypatch.delenv(name)
    for name in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "PIP_NO_CACHE_DIR", "FAKE_TF_MODE", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, env[name])
    from tfdoctor.diagnosis import doctor

    real = doctor.diagnose
    seen: list[str | None] = []  # the variable each diagnosis ran under
    in_this_process: list[str | None] = []

    def diagnose(options):
        report = real(options)
        seen.append((os.environ if options.environ is None else options.environ).get("TF_USE_LEGACY_KERAS"))
        in_this_process.append(os.environ.get("TF_USE_LEGACY_KERAS"))
        if seen[-1] == "1":
            return report
        legacy = CheckResult("companions", "companions", Status.FAIL, "a tf-keras layer in a Keras 3 tf.keras model",
                             remediation=Remediation("set it", repairs=(Repair.set_env("TF_USE_LEGACY_KERAS", "1",
                                                                                     reason="tf.keras must be tf-keras"),)))
        return RunReport(report.facts, [*report.results, legacy])

    monkeypatch.setattr(doctor, "diagnose", diagnose)
    said = _Said()
    code = flow.fix(flow.FixOptions(str(target / "bin" / "python"), only=("dependencies",), yes=True), said)
    assert code == flow.EXIT_SHELL_STEPS_LEFT == 3, said.lines
    assert seen == [None, "1", "1"]  # the real environment as it is; the copy and the applied one as it will be
    assert in_this_process == [None, None, None]  # the children get the variable; this process never has it
    assert "TF_USE_LEGACY_KERAS" not in os.environ
    assert "fakedep==2.0" in _freeze(target)
    text = "\n".join(said.lines)
    assert "once step 2 (export TF_USE_LEGACY_KERAS=1) is done in your shell" in text
    assert "Left to you: step 2 (export TF_USE_LEGACY_KERAS=1)" in text and "cannot change your shell" in text


def test_undo_after_an_interrupt_in_the_same_process_still_runs_its_children(tmp_path, monkeypatch):
    """The API or a notebook: an interrupt closed the process-wide children registry (kill_all), so any child
    started afterwards was killed at once and `undo` read the target as "could not answer: failed". A new
    operation reopens it."""
    from tfdoctor.fixer import flow
    from tfdoctor.processes.commands import CHILDREN

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    CHILDREN.kill_all()
    said = _Said()
    flow.undo(sys.executable, said, yes=True)  # raised FixError "could not answer: failed" before
    assert any("nothing to undo" in line.lower() for line in said.lines), said.lines
