"""Where the target finds tensorflow, numpy, ... (python.module_origins, recorded by
tfdoctor/child/target_info.py), run for real by a bare venv's Python from temporary project folders: a
script, a PYTHONPATH entry, a namespace folder, .pth files. The shadowing check on such facts is
tests/checks/test_shadowing.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.child import source


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A bare venv (no pip) whose site-packages holds `numpy` and `tensorflow` packages: the installation's."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "env")], check=True, timeout=120)
    site = next((root / "env" / "lib").glob("python3*/site-packages"))
    package(site, "numpy", "2.1.3")
    package(site, "tensorflow", "2.21.0")
    return root / "env"


def site_of(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def describe(venv: Path, cwd: Path, **env: str) -> dict:
    """python.module_origins as the target child records it, run by the venv's Python from `cwd`."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONSAFEPATH")}
    environ.update(env)
    completed = subprocess.run([str(venv / "bin" / "python"), "-c", source("target_info")], capture_output=True,
                               check=True, cwd=str(cwd), env=environ, timeout=60)
    return json.loads(completed.stdout)["python"]["module_origins"]


def describe_from_elsewhere(venv: Path, project: Path, prelude: str = "", **env: str) -> dict:
    """As the collector runs it (collect/target.py): from an empty directory, told the project folder."""
    empty = project.parent / "empty"
    empty.mkdir()
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONSAFEPATH")}
    environ.update(env)
    completed = subprocess.run([str(venv / "bin" / "python"), "-c", prelude + source("target_info"), str(project)],
                               capture_output=True, cwd=str(empty), env=environ, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)["python"]["module_origins"]


def planted(project: Path, *names: str) -> None:
    """Files named like modules that write a marker when imported."""
    for name in names:
        (project / f"{name}.py").write_text(f"open({str(project / 'IMPORTED')!r}, 'a').write({name!r})\n")


def module(origins: dict, name: str) -> dict:
    return next(m for m in origins["modules"] if m["module"] == name)


def package(root: Path, name: str, version: str = "0") -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "__init__.py").write_text(f"__version__ = {version!r}\n")
    return directory


def test_from_a_clean_folder_everything_comes_from_site_packages(venv, tmp_path):
    origins = describe(venv, tmp_path)
    assert module(origins, "numpy")["kind"] == module(origins, "tensorflow")["kind"] == "site-packages"
    assert module(origins, "keras")["found"] is False
    assert origins["installation_site_dirs"] == [str(site_of(venv))]
    assert origins["entries"][0] == {"path": "", "kind": "working-directory", "pth": None, "pythonpath_item": None}


def test_a_script_named_tensorflow_in_the_project_folder_comes_first(venv, tmp_path):
    (tmp_path / "tensorflow.py").write_text("import tensorflow as tf\n")
    origins = describe(venv, tmp_path)
    found = module(origins, "tensorflow")
    assert found["origin"] == str(tmp_path / "tensorflow.py")
    assert found["kind"] == "working-directory" and found["entry"] == "" and found["entry_index"] == 0
    assert origins["cwd"] == str(tmp_path)
    assert found["copies"] == [{"origin": str(site_of(venv) / "tensorflow" / "__init__.py"),
                                "entry": str(site_of(venv)), "kind": "site-packages"}]


def test_a_pythonpath_entry_is_named_as_written_and_the_shell_line_that_sets_it(venv, tmp_path):
    old = tmp_path / "old"
    package(old, "numpy", "1.23.5")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text(f"# keep\nexport PYTHONPATH={old}:$PYTHONPATH\nalias ll='ls -l'\n")
    project = tmp_path / "project"
    project.mkdir()
    origins = describe(venv, project, PYTHONPATH=f"{old}{os.pathsep}{tmp_path / 'absent'}", HOME=str(home))
    found = module(origins, "numpy")
    assert found["kind"] == "PYTHONPATH" and found["origin"] == str(old / "numpy" / "__init__.py")
    assert origins["entries"][found["entry_index"]]["pythonpath_item"] == str(old)
    assert [c["kind"] for c in found["copies"]] == ["site-packages"]
    assert origins["pythonpath"].startswith(str(old))
    assert origins["shell_lines"] == [{"file": str(home / ".bashrc"), "line": 2,
                                       "text": f"export PYTHONPATH={old}:$PYTHONPATH"}]


def test_without_pythonpath_no_shell_file_is_read(venv, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("export PYTHONPATH=/somewhere\n")
    assert describe(venv, tmp_path, HOME=str(home))["shell_lines"] == []


def test_a_google_module_of_the_project_hides_google_protobuf(venv, tmp_path):
    (tmp_path / "google.py").write_text("")
    found = module(describe(venv, tmp_path), "google.protobuf")
    assert found["found"] is False
    assert found["parent"]["kind"] == "working-directory" and found["parent"]["origin"] == str(tmp_path / "google.py")


def test_a_namespace_folder_does_not_hide_a_regular_package(venv, tmp_path):
    (tmp_path / "numpy").mkdir()  # a folder without __init__.py: the regular numpy further down wins
    found = module(describe(venv, tmp_path), "numpy")
    assert found["kind"] == "site-packages" and found["namespace"] is False


def test_an_old_easy_install_pth_moves_its_entries_ahead_of_site_packages(venv, tmp_path):
    site = site_of(venv)
    egg = tmp_path / "numpy-1.16.0.egg"
    package(egg, "numpy", "1.16.0")
    # setuptools' easy-install.pth: its import lines move the entries between them to the front
    (site / "easy-install.pth").write_text(
        "import sys; sys.__plen = len(sys.path)\n"
        f"{egg}\n"
        "import sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); "
        "sys.path[p:p] = new; sys.__egginsert = p + len(new)\n")
    try:
        origins = describe(venv, tmp_path)
    finally:
        (site / "easy-install.pth").unlink()
    found = module(origins, "numpy")
    assert found["kind"] == "pth" and found["origin"] == str(egg / "numpy" / "__init__.py")
    assert origins["entries"][found["entry_index"]]["pth"] == str(site / "easy-install.pth")
    assert [c["kind"] for c in found["copies"]] == ["site-packages"]


def test_a_plain_pth_line_comes_after_site_packages_and_hides_nothing(venv, tmp_path):
    site = site_of(venv)
    extra = tmp_path / "src"
    package(extra, "ml_dtypes")
    (site / "dev.pth").write_text(f"{extra}\n")
    try:
        origins = describe(venv, tmp_path)
    finally:
        (site / "dev.pth").unlink()
    found = module(origins, "ml_dtypes")
    assert found["kind"] == "pth" and found["copies"] == []  # an editable-style install of its own
    assert module(origins, "numpy")["kind"] == "site-packages"


def test_told_the_project_folder_it_reads_what_is_there_and_imports_none_of_it(venv, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    planted(project, "json", "struct", "tensorflow", "os")
    (project / "email").mkdir()
    (project / "email" / "__init__.py").write_text("")
    (project / "logging").mkdir()  # a folder without __init__.py: the standard library's package comes first
    (project / "src").mkdir()
    package(project / "src", "numpy", "0.1")
    origins = describe_from_elsewhere(venv, project, PYTHONPATH="src")  # relative: the project folder's src
    assert not (project / "IMPORTED").exists()
    assert origins["cwd"] == str(project)
    found = module(origins, "tensorflow")
    assert found["kind"] == "working-directory" and found["origin"] == str(project / "tensorflow.py")
    numpy = module(origins, "numpy")
    assert numpy["kind"] == "PYTHONPATH" and numpy["origin"] == str(project / "src" / "numpy" / "__init__.py")
    assert origins["entries"][numpy["entry_index"]] == {"path": str(project / "src"), "kind": "PYTHONPATH", "pth": None,
                                                        "pythonpath_item": "src"}
    shadows = {s["module"]: s for s in origins["stdlib_shadows"]}
    assert set(shadows) == {"json", "struct", "os", "email"}
    assert shadows["json"]["origin"] == str(project / "json.py") and shadows["json"]["masked_by"] is None
    assert shadows["json"]["stdlib_origin"].endswith(os.path.join("json", "__init__.py"))
    assert shadows["email"]["origin"] == str(project / "email" / "__init__.py")
    assert shadows["os"]["masked_by"] in ("startup", "frozen")  # imported before any code of the folder runs
    assert origins["stdlib_names_from"] == ("sys.stdlib_module_names" if sys.version_info >= (3, 10)
                                            else "stdlib directory")


def test_without_stdlib_module_names_the_names_are_read_from_the_standard_library(venv, tmp_path):
    """Python 3.9 has no sys.stdlib_module_names: the standard library's own directories say the names."""
    project = tmp_path / "project"
    project.mkdir()
    planted(project, "json", "binascii")
    prelude = "import sys\nif hasattr(sys, 'stdlib_module_names'): del sys.stdlib_module_names\n"
    origins = describe_from_elsewhere(venv, project, prelude)
    assert origins["stdlib_names_from"] == "stdlib directory"
    assert {s["module"] for s in origins["stdlib_shadows"]} == {"json", "binascii"}
    assert not (project / "IMPORTED").exists()
