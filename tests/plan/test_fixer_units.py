"""The fixer's parts, one at a time: what changes between two freezes, steps re-spelled for the clone
(never reaching the real environment), the hard-link copy, and the rollback snapshot put back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.fixer import rollback
from tfdoctor.fixer.environment import STATE_DIR, Environment, link_tree
from tfdoctor.fixer.flow import _run_plan, changes
from tfdoctor.plan.planner import Step
from tfdoctor.environment.spell import Spelling
from tfdoctor.results.repairs import Action


class Silent:
    def __init__(self):
        self.said = []

    def progress(self, text):
        import contextlib

        return contextlib.nullcontext()

    def say(self, text, style=""):
        self.said.append(text)


def test_changes_lists_each_distribution_that_moves_appears_or_goes():
    before = ["keras==3.15.1", "numpy==2.4.6", "tensorflow==2.21.0"]
    after = ["keras==3.15.1", "numpy==2.2.6", "tf-keras==2.21.0"]
    assert changes(before, after) == ["tensorflow 2.21.0 -> removed", "numpy 2.4.6 -> 2.2.6",
                                      "tf-keras (not installed) -> 2.21.0"]  # TensorFlow's builds first
    assert changes(before, before) == []


def test_a_conda_step_is_respelled_for_the_clone_prefix():
    step = Step(1, Action.REINSTALL, "conda install ...", ("numpy==1.26.4",), manager="conda", prefix="/envs/tf")
    spelling = Spelling("conda", "/envs/.tf.tfdoctor-verify-1/bin/python")
    assert step.argv(spelling, "/envs/.tf.tfdoctor-verify-1") == [
        "conda", "install", "-p", "/envs/.tf.tfdoctor-verify-1", "--force-reinstall", "--no-deps", "-y", "--", "numpy=1.26.4"]
    pip_step = Step(2, Action.INSTALL, "...", ("h5py<3.15",))
    assert pip_step.argv(spelling, "/envs/.tf.tfdoctor-verify-1")[:4] == [spelling.python, "-m", "pip", "install"]


def test_a_step_that_names_the_real_environment_is_refused_on_the_copy():
    step = Step(1, Action.INSTALL, "...", ("pkg",))
    real = Spelling("venv", "/envs/tf/bin/python")  # a spelling that still points at the real interpreter
    failed = _run_plan([step], real, options=None, ui=Silent(), where="on the copy", prefix="/envs/.tf.copy",
                       never_touch="/envs/tf")
    assert failed and "would reach the real environment" in failed



def test_a_failed_step_is_explained_by_the_install_signatures(tmp_path):
    """pip's own words when it cannot replace a distribution installed without RECORD (pip 26, as the live
    suite saw it for protobuf): fix names the cause and the way out, from knowledge/signatures.toml."""
    from types import SimpleNamespace

    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\nprintf 'error: uninstall-no-record-file\\n\\n\\342\\234\\227 Cannot uninstall protobuf "
                           "5.29.5\\n\\342\\225\\260\\342\\224\\200> The package'\\''s contents are unknown: no RECORD "
                           "file was found for protobuf.\\n' >&2\nexit 1\n", encoding="utf-8")
    fake_python.chmod(0o755)
    step = Step(1, Action.INSTALL, "pip install protobuf>=6.31.1", ("protobuf>=6.31.1",))
    failed = _run_plan([step], Spelling("venv", str(fake_python)), SimpleNamespace(step_timeout=30.0), Silent(),
                       "on the copy", str(tmp_path))
    assert failed and "no RECORD file was found for protobuf" in failed
    assert "Why: pip could not replace a distribution: it was installed without the RECORD file" in failed
    assert "delete its metadata directory" in failed and "exceptions.py" in failed
    healthy = tmp_path / "ok"
    healthy.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    healthy.chmod(0o755)
    assert _run_plan([step], Spelling("venv", str(healthy)), SimpleNamespace(step_timeout=30.0), Silent(),
                     "on the copy", str(tmp_path)) is None

def test_link_tree_links_files_copies_pth_and_leaves_the_state_directory_out(tmp_path):
    source = tmp_path / "env"
    (source / "lib" / "site-packages" / "pkg").mkdir(parents=True)
    module = source / "lib" / "site-packages" / "pkg" / "__init__.py"
    module.write_text("x = 1\n")
    pth = source / "lib" / "site-packages" / "easy-install.pth"
    pth.write_text("/somewhere\n")
    (source / "bin").mkdir()
    (source / "bin" / "python").symlink_to(sys.executable)
    (source / STATE_DIR / "rollback").mkdir(parents=True)
    target = tmp_path / "copy"
    link_tree(source, target)
    copied = target / "lib" / "site-packages"
    assert os.path.samefile(copied / "pkg" / "__init__.py", module)  # a hard link: no disk used
    assert not os.path.samefile(copied / "easy-install.pth", pth)  # installers edit .pth files in place
    assert (target / "bin" / "python").is_symlink()
    assert not (target / STATE_DIR).exists()


@pytest.fixture()
def venv(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the records' seals: never the real cache
    env = tmp_path / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(env)], check=True)
    return env


def _site(env: Path) -> Path:
    return next((env / "lib").glob("python3*/site-packages"))


def _dist(site: Path, name: str, version: str) -> Path:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return info


def test_the_snapshot_goes_back_exactly_and_the_record_is_dropped(venv):
    site = _site(venv)
    _dist(site, "fakedep", "1.0")
    environment = Environment(str(venv / "bin" / "python"), str(venv), "venv")
    way_back = rollback.create(environment, {"steps": []})
    assert way_back.freeze == ["fakedep==1.0"]
    assert rollback.newest(environment).directory == way_back.directory
    # what a plan does: replace one distribution, add another
    import shutil

    shutil.rmtree(site / "fakedep-1.0.dist-info")
    _dist(site, "fakedep", "2.0")
    _dist(site, "added", "0.1")
    assert rollback.restore(way_back) == rollback.Restored(["fakedep==1.0"], verified=True)
    assert not (site / "added-0.1.dist-info").exists()
    assert rollback.newest(environment) is None
    assert (venv / STATE_DIR).is_dir()  # the state directory itself stays


def test_only_the_newest_records_are_kept(venv):
    environment = Environment(str(venv / "bin" / "python"), str(venv), "venv")
    made = [rollback.create(environment, {"steps": []}).directory for _ in range(rollback.KEEP + 2)]
    kept = sorted(p for p in (venv / STATE_DIR / "rollback").iterdir())
    assert kept == sorted(made[-rollback.KEEP:])


def test_a_system_python_is_never_copied_its_stand_in_is_a_temporary_venv_that_sees_its_packages():
    from tfdoctor.fixer.environment import clone, prefix_of, remove

    base = getattr(sys, "_base_executable", sys.executable)
    system = Environment(base, prefix_of(base), "system")
    copy = clone(system)
    try:
        assert not copy.prefix.startswith(system.prefix.rstrip("/") + "/")
        assert prefix_of(copy.python) == os.path.realpath(copy.prefix) or prefix_of(copy.python) == copy.prefix
        assert "include-system-site-packages = true" in (Path(copy.prefix) / "pyvenv.cfg").read_text()
    finally:
        remove(copy.prefix)
    assert not Path(copy.prefix).exists()


def test_keeping_one_of_two_builds_or_swapping_builds_is_no_tensorflow_move():
    from tfdoctor.fixer.flow import _tensorflow_moved

    two = ["keras==3.15.1", "tensorflow==2.21.0", "tensorflow-cpu==2.21.0"]
    assert not _tensorflow_moved(two, ["keras==3.15.1", "tensorflow-cpu==2.21.0"])
    assert not _tensorflow_moved(["tensorflow-cpu==2.21.0"], ["tensorflow==2.21.0"])
    assert _tensorflow_moved(["tensorflow-cpu==2.21.0"], ["tensorflow-cpu==2.20.0"])
    assert _tensorflow_moved(["tensorflow-cpu==2.21.0"], ["keras==3.15.1"])
