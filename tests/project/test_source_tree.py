"""README's first step from a clean clone: a plain (non-editable) `pip install .`, then `python -m tfdoctor`
run from the clone's root, where the source tree's tfdoctor/ shadows the installed package and holds no
checks/ (tfdoctor/source_tree.py maps the top-level checks/ in)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tfdoctor import source_tree

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plain_install(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A clean clone of the committed tree and a plain install of it; the environment that runs it.

    The install goes to a --target directory (about 3.5 s, against ~20 s for a new venv with its
    dependencies). `python -S` keeps this test environment's editable-install finder (a .pth file) out,
    so only the plain install and the dependencies' site-packages are on the path, as in a fresh venv.
    """
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to clone")
    base = tmp_path_factory.mktemp("newcomer")
    clone, target = base / "clone", base / "site"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(clone)],
                   check=True, capture_output=True)
    dependencies = sysconfig.get_paths()["purelib"]  # typer, rich, psutil, ...
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(target), dependencies))}
    return clone, env


def run_in(clone: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-S", *args], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_clone_shadows_the_installed_package(plain_install):
    clone, env = plain_install
    assert not (clone / "tfdoctor" / "checks").exists()
    done = run_in(clone, env, "-c", "import json, tfdoctor, tfdoctor.checks; "
                                    "print(json.dumps([tfdoctor.__file__, tfdoctor.checks.__file__]))")
    assert done.returncode == 0, done.stderr
    package, checks = (Path(p) for p in json.loads(done.stdout))
    assert package == clone / "tfdoctor" / "__init__.py"  # the source tree wins, as for a newcomer
    assert checks == clone / "checks" / "__init__.py"


def test_python_m_tfdoctor_list_from_the_clone_root(plain_install):
    clone, env = plain_install
    done = run_in(clone, env, "-m", "tfdoctor", "--list")
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert {"platform-support", "cuda-build", "gpu-visible", "probe"} <= set(listed)


def test_bench_finds_the_checks_from_the_clone_root(plain_install):
    clone, env = plain_install
    done = run_in(clone, env, "-c", "import runpy; bench = runpy.run_path('bench/bench.py', run_name='bench'); "
                                    "print(','.join(bench['tensorflow_checks']()))")
    assert done.returncode == 0, done.stderr
    assert "tensorflow-import" in done.stdout.split(",")


def test_an_installed_package_is_left_alone(tmp_path):
    package = tmp_path / "site" / "tfdoctor"
    (package / "checks").mkdir(parents=True)
    assert source_tree.checks_directory(str(package)) is None
    clone = tmp_path / "clone"
    (clone / "tfdoctor").mkdir(parents=True)
    (clone / "checks").mkdir()
    (clone / "checks" / "__init__.py").write_text("MODULES = ()\n")
    assert source_tree.checks_directory(str(clone / "tfdoctor")) is None  # no pyproject.toml: not a clone
    (clone / "pyproject.toml").write_text("")
    assert source_tree.checks_directory(str(clone / "tfdoctor")) == str(clone / "checks")
