"""`tfdoctor scan`: finding environments (conda, pyenv, pipx, uv, pyvenv.cfg under a directory), the one
table sorted working-with-GPU first, the exit code, and, on real environments (tests/scan_support.py),
the same verdicts as one `tfdoctor --python ENV --no-probe` run each. Timing lives in bench/bench_scan.py."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import fakes, scan_support
from tests.integration_support import MARKS
from tests.cli_support import run_cli
from tfdoctor.render import scan_table
from tfdoctor.scan import summary
from tfdoctor.scan.find import FoundEnvironment, Places, find_environments, walk

POSIX = pytest.mark.skipif(os.name != "posix", reason="POSIX paths, signals and terminals")


def venv(path: Path, python: bool = True) -> Path:
    """A directory that looks like a venv: pyvenv.cfg and bin/python (an executable file)."""
    (path / "bin").mkdir(parents=True)
    (path / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    if python:
        (path / "bin" / "python").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        (path / "bin" / "python").chmod(0o755)
    return path


def places(tmp_path: Path, *roots: Path, managers: bool = False, depth: int = 4, **environ: str) -> Places:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Places(roots=tuple(roots), home=home, environ={"PATH": str(tmp_path / "no-bin"), **environ},
                  managers=managers, depth=depth)


# ------------------------------------------------------------------------------------------ finding

def test_the_walk_finds_venvs_and_conda_envs_a_few_levels_down_and_skips_caches(tmp_path):
    root = tmp_path / "work"
    found_here = [venv(root / "proj" / ".venv"), venv(root / "a" / "b" / "c" / "env"), venv(root / "tox" / ".tox" / "py311")]
    (root / "miniforge" / "envs" / "tf" / "conda-meta").mkdir(parents=True)
    found_here.append(root / "miniforge" / "envs" / "tf")
    skipped = [venv(root / "web" / "node_modules" / "x"), venv(root / ".cache" / "pre-commit" / "repo"),
               venv(root / "Library" / "Caches" / "env"), venv(root / "lib" / "site-packages" / "env"),
               venv(root / "a" / "b" / "c" / "d" / "too-deep")]
    inside = venv(root / "proj" / ".venv" / "lib" / "nested")  # never entered: an environment holds no other
    (root / "loop").symlink_to(root, target_is_directory=True)  # a link to a directory is not followed
    assert sorted(walk(root, 4)) == sorted(found_here)
    assert not set(skipped + [inside]) & set(walk(root, 4))
    assert list(walk(root / "proj" / ".venv", 4)) == [root / "proj" / ".venv"]  # a PATH that is an environment
    assert list(walk(root, 2)) == [root / "proj" / ".venv"]


def test_paths_given_are_the_only_places_looked_at(tmp_path):
    env = venv(tmp_path / "work" / "env")
    (tmp_path / "home" / ".pyenv" / "versions" / "3.11.7" / "bin").mkdir(parents=True)
    found = find_environments(places(tmp_path, tmp_path / "work"))
    assert found == [FoundEnvironment(str(env), str(env / "bin" / "python"), ("venv",))]


def test_conda_is_asked_for_its_environments(tmp_path):
    """`conda info --envs --json` prints {"envs": [prefix, ...]}: https://github.com/conda/conda/issues/6797,
    https://github.com/conda/conda/pull/15353 (newer conda prints only that key)."""
    base, tf = tmp_path / "miniforge3", tmp_path / "miniforge3" / "envs" / "tf"
    for prefix in (base, tf):
        (prefix / "conda-meta").mkdir(parents=True)
        (prefix / "bin").mkdir()
        (prefix / "bin" / "python").touch()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    conda = bin_dir / "conda"
    conda.write_text("#!/bin/sh\n[ \"$*\" = 'info --envs --json' ] || exit 2\n"
                     f"printf '%s' '{json.dumps({'envs': [str(base), str(tf)]})}'\n", encoding="utf-8")
    conda.chmod(0o755)
    found = find_environments(places(tmp_path, managers=True, PATH=str(bin_dir)))
    assert [(e.prefix, e.python, e.kinds) for e in found] == [
        (str(base), str(base / "bin" / "python"), ("conda",)), (str(tf), str(tf / "bin" / "python"), ("conda",))]


def test_without_conda_its_environments_txt_is_read(tmp_path):
    env = tmp_path / "opt" / "envs" / "metal"
    (env / "conda-meta").mkdir(parents=True)
    (tmp_path / "home" / ".conda").mkdir(parents=True)
    (tmp_path / "home" / ".conda" / "environments.txt").write_text(f"{env}\n\n", encoding="utf-8")
    found = find_environments(places(tmp_path, managers=True))
    assert [(e.prefix, e.kinds) for e in found] == [(str(env), ("conda",))]


def test_pyenv_pipx_and_uv_tool_venvs_are_found(tmp_path):
    home = tmp_path / "home"
    pyenv = [home / ".pyenv" / "versions" / "3.11.7", home / ".pyenv" / "versions" / "3.11.7" / "envs" / "tf"]
    for path in pyenv:
        (path / "bin").mkdir(parents=True, exist_ok=True)
    pipx = venv(home / ".local" / "share" / "pipx" / "venvs" / "black")
    uv = venv(tmp_path / "data" / "uv" / "tools" / "ruff")
    found = find_environments(places(tmp_path, managers=True, XDG_DATA_HOME=str(tmp_path / "data")))
    assert [(e.prefix, e.kinds) for e in found] == [(str(pyenv[0]), ("pyenv",)), (str(pyenv[1]), ("pyenv",)),
                                                    (str(pipx), ("pipx",)), (str(uv), ("uv-tool",))]


def test_an_environment_found_twice_is_listed_once_with_both_ways(tmp_path):
    env = tmp_path / "home" / "miniforge3" / "envs" / "tf"
    (env / "conda-meta").mkdir(parents=True)
    (tmp_path / "home" / ".conda").mkdir()
    (tmp_path / "home" / ".conda" / "environments.txt").write_text(f"{env}\n", encoding="utf-8")
    found = find_environments(places(tmp_path, tmp_path / "home", managers=True))
    assert [(e.prefix, e.kinds) for e in found] == [(str(env), ("conda",))]
    link = tmp_path / "home" / "tf-link"
    link.symlink_to(env, target_is_directory=True)
    found = find_environments(places(tmp_path, tmp_path / "home", link, managers=True))
    assert len(found) == 1  # the same directory by its resolved path


def test_default_places_are_the_working_and_home_directories_and_the_managers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    default = Places.default()
    assert default.roots == (tmp_path, Path.home()) and default.managers
    given = Places.default(["~/envs"])
    assert given.roots == (Path.home() / "envs",) and not given.managers


# ------------------------------------------------------------------------------------------ rows

def entry(name: str, exit_code: int, verdict: str, gpus=None) -> dict:
    return {"environment": name, "exit_code": exit_code, "verdict": verdict, "gpus": gpus}


def test_rows_sort_working_with_a_gpu_first_then_working_then_failing_then_not_runnable():
    rows = [entry("/e/cannot", 2, "cannot run"), entry("/e/fail", 1, "fail", 1), entry("/e/cpu-warn", 0, "warn", 0),
            entry("/e/cpu", 0, "pass", 0), entry("/e/gpu-warn", 0, "warn", 1), entry("/e/gpu", 0, "pass", 2),
            entry("/e/a-fail", 1, "fail", None)]
    assert [r["environment"] for r in summary.sorted_rows(rows)] == [
        "/e/gpu", "/e/gpu-warn", "/e/cpu", "/e/cpu-warn", "/e/a-fail", "/e/fail", "/e/cannot"]


@pytest.mark.parametrize("codes, expected", [((0, 1, 2), 0), ((1, 2), 1), ((), 1), ((2,), 1)])
def test_the_scan_exits_0_when_one_environment_passes(codes, expected):
    assert summary.exit_code([entry(f"/e/{i}", c, "x") for i, c in enumerate(codes)]) == expected


def test_the_table_says_why_and_escapes_markdown():
    rows = [{**entry("/home/<user>/a|b", 1, "fail", None), "python_version": "3.11.7", "tensorflow": "2.21.0",
             "tensorflow_imported": False, "reason": None,
             "first_problem": {"id": "tensorflow-import", "status": "fail", "summary": "`import tensorflow` raised *x*"}},
            {**entry("/e/gone", 2, "cannot run"), "python_version": None, "tensorflow": None, "reason": "not an executable file",
             "first_problem": None}]
    text = scan_table.render_text(rows, width=200)
    assert "2 environments: 0 working (0 with a GPU), 2 not" in text
    assert "2.21.0 (import fails)" in text and "tensorflow-import: `import tensorflow` raised *x*" in text
    assert "cannot run  not an executable file" in text
    lines = scan_table.render_markdown(rows).splitlines()
    assert lines[4:8] == [
        "| environment | Python | TensorFlow | GPU listed | verdict | first failing check |", "|---|---|---|---|---|---|",
        "| `/home/<user>/a\\|b` | 3.11.7 | 2.21.0 (import fails) | – | fail | tensorflow-import: \\`import tensorflow\\` raised \\*x\\* |",
        "| `/e/gone` | – | – | – | cannot run | not an executable file |"]


# ------------------------------------------------------------------------------------------ real environments

def single_run(python: str, cwd: Path) -> dict:
    """`tfdoctor --python PYTHON --no-probe --json` as its own process: exit code, results or the reason."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "tfdoctor", "--python", python, "--no-probe", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=str(cwd), env=environ)
    if done.returncode == 2:
        return {"exit_code": 2, "reason": done.stderr.strip().removeprefix("tfdoctor: error: ")}
    document = json.loads(done.stdout)
    return {"exit_code": done.returncode, "results": {r["id"]: r["status"] for r in document["results"]}}


@pytest.fixture(scope="module")
def few(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("environments")
    return scan_support.build_all(scan_support.FEW, directory)


@MARKS[0]
@MARKS[1]
@POSIX
def test_scan_gives_every_environment_the_verdict_of_its_own_run(few, tmp_path):
    directory = next(iter(few.values())).parent.parent
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "tfdoctor", "scan", str(directory), "--json", "--no-redact"],
                          capture_output=True, text=True, timeout=600, cwd=str(tmp_path), env=environ)
    assert done.returncode == 0, done.stderr  # the healthy copy passes
    scanned = {Path(row["environment"]).parent.name: row for row in json.loads(done.stdout)["environments"]}
    assert sorted(scanned) == sorted(few)
    for name, env in few.items():
        row = scanned[name]
        single = single_run(row["python"], tmp_path)
        assert row["exit_code"] == single["exit_code"], (name, row, single)
        if single["exit_code"] == 2:
            # the wording may differ: two collectors can find the interpreter unusable first (see the bench)
            assert row["verdict"] == "cannot run" and row["python"] in row["reason"] and row["python"] in single["reason"]
        else:
            assert row["results"] == single["results"], name
    assert scanned["healthy"]["verdict"] == "pass" and scanned["healthy"]["gpus"] == 0
    assert scanned["healthy"]["tensorflow"] and scanned["healthy"]["python_version"]
    assert scanned["deleted-framework-library"]["first_problem"]["id"] in ("install-integrity", "tensorflow-import")
    assert scanned["fresh-venv-no-tensorflow"]["first_problem"]["id"] == "tensorflow-install"
    assert "Exec format error" in scanned["foreign-interpreter"]["reason"]
    assert "not an executable file" in scanned["dangling-interpreter"]["reason"]
    order = [Path(row["environment"]).parent.name for row in json.loads(done.stdout)["environments"]]
    assert order[0] == "healthy" and set(order[-2:]) == {"dangling-interpreter", "foreign-interpreter"}


@POSIX
def test_no_environment_passing_exits_1_and_none_found_says_so(tmp_path):
    scan_support.dangling_interpreter(tmp_path / "envs" / "gone")
    code, out, _ = run_cli(["scan", str(tmp_path / "envs")])
    assert code == 1 and "1 environment: 0 working (0 with a GPU), 1 not" in out and "cannot run" in out
    code, out, err = run_cli(["scan", str(tmp_path / "typo")])
    assert code == 2 and out == "" and err == f"tfdoctor: error: {tmp_path / 'typo'}: no such file or directory\n"
    (tmp_path / "empty").mkdir()
    code, out, _ = run_cli(["scan", str(tmp_path / "empty"), "--format", "markdown"])
    assert code == 1 and "**no Python environments found**" in out


def _scan_on_a_terminal(directory: Path) -> tuple[int, str, str]:
    """`tfdoctor scan DIR` with stderr on a pseudo-terminal (where the progress bar goes), stdout a pipe."""
    main, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "tfdoctor", "scan", str(directory)], stdout=subprocess.PIPE,
                               stderr=secondary, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    os.close(secondary)
    screen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.close(main)
    stdout = process.stdout.read().decode()
    return process.wait(timeout=120), stdout, screen.decode("utf-8", "replace")


@POSIX
def test_a_progress_bar_on_a_terminal_only(tmp_path):
    for name in ("a", "b", "c"):
        scan_support.fresh_venv(scan_support.base_python())(tmp_path / "envs" / name)
    code, stdout, screen = _scan_on_a_terminal(tmp_path / "envs")
    assert code == 1 and "3 environments" in stdout
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    assert "diagnosing" in screen and "3/3" in screen  # rich's bar, then erased (transient)
    assert "diagnosing" not in stdout
    code, out, err = run_cli(["scan", str(tmp_path / "envs")])
    assert "diagnosing" not in out + err


@POSIX
def test_an_interrupt_stops_every_diagnosis_and_leaves_no_child(tmp_path):
    """Two environments whose TensorFlow import hangs (the fake starts a helper too): SIGINT ends the
    scan at once, exit 130, nothing on stdout, no process left."""
    for name in ("a", "b"):
        env = tmp_path / "envs" / name
        scan_support.fresh_venv(scan_support.base_python())(env)
        fakes.install(scan_support.site_packages(env), fakes.HANGS)
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environ["FAKE_TF_PIDFILE"] = str(tmp_path / "pids.txt")
    scan = subprocess.Popen([sys.executable, "-m", "tfdoctor", "scan", str(tmp_path / "envs"), "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ, cwd=str(tmp_path))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pids = (tmp_path / "pids.txt").read_text().split() if (tmp_path / "pids.txt").exists() else []
        if len(pids) >= 4:
            break
        time.sleep(0.05)
    else:
        scan.kill()
        raise AssertionError("the fake imports never started")
    scan.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = scan.communicate(timeout=60)
    assert time.monotonic() - sent < 15
    assert scan.returncode == 130 and stdout == ""
    assert stderr.strip().splitlines()[-1] == "tfdoctor: interrupted"
    assert fakes.survivors([int(p) for p in pids]) == []


def test_scan_support_builds_interpreters_that_cannot_start(tmp_path):
    scan_support.foreign_interpreter(tmp_path / "foreign")
    python = tmp_path / "foreign" / "bin" / "python"
    assert python.stat().st_mode & stat.S_IXUSR
    with pytest.raises(OSError):
        subprocess.run([str(python), "-V"], capture_output=True, timeout=10)


@POSIX
def test_one_diagnosis_giving_up_kills_its_own_children_only():
    """Two diagnoses in one process (the scan's threads): an unusable interpreter ends the children of its
    own diagnosis, and any it starts after; the other's keep running until an interrupt kills them all."""
    from tfdoctor.processes.commands import CHILDREN, owned_by

    def start(owner: object) -> subprocess.Popen:
        def spawn() -> subprocess.Popen:
            process = subprocess.Popen(["sleep", "60"], start_new_session=True)
            CHILDREN.add(process)
            return process
        return owned_by(owner, spawn)

    mine, other = object(), object()
    doomed, bystander = start(mine), start(other)
    started = [doomed, bystander]
    try:
        CHILDREN.kill_owned(mine)
        assert doomed.wait(timeout=10) == -signal.SIGKILL
        started.append(start(mine))  # started by a collector that had not noticed yet
        assert started[-1].wait(timeout=10) == -signal.SIGKILL
        time.sleep(0.2)
        assert bystander.poll() is None
        CHILDREN.kill_all()
        assert bystander.wait(timeout=10) == -signal.SIGKILL
    finally:
        for process in started:
            CHILDREN.discard(process)
            process.kill()
            process.wait()
        CHILDREN.release(mine)
        CHILDREN.reopen()


def test_the_scan_deadline_cuts_what_it_has_not_reached_into_rows_that_say_so(tmp_path):
    """tfdoctor/processes/deadline.py: past the scan's deadline no environment is diagnosed (none of its children start);
    each is a row with the reason, not a verdict."""
    from tfdoctor.processes.deadline import within
    from tfdoctor.diagnosis.doctor import DoctorOptions
    from tfdoctor.scan.run import diagnose_all

    found = [FoundEnvironment(str(tmp_path / name), sys.executable, ("given",)) for name in ("a", "b")]
    started = time.monotonic()
    with within(0.0):
        diagnosed = diagnose_all(found, lambda e: DoctorOptions(python=e.python), lambda document: document)
    assert time.monotonic() - started < 5
    assert [(d.exit_code, d.reason) for d in diagnosed] == [(2, "not diagnosed: the scan's deadline (0 s) passed first")] * 2
