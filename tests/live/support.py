"""Build real TensorFlow environments from the package index, break them, run the doctor on them, and
run the doctor's own commands on a copy, as a user pastes them.

One base environment holds the test setup's own TensorFlow (the `tensorflow-cpu` that `.[test]` installs,
with the exact versions of its dependency closure, downloaded once into a wheelhouse and installed
`--no-deps`: no resolver, no surprise). Most cases are a hard-link copy of it (`cp -al`): pip replaces a
file by unlinking it and writing a new one, and deleting a file only unlinks it, so a copy never changes
the base. Nothing here writes into an existing file of a copy. Other cases are made as a user makes them:
a fresh venv of a pyenv Python and `pip install tensorflow-cpu==X` with pip's own resolver, or `uv venv`
and `uv pip install` of the base's wheels (uv comes with the test setup; every command here finds it, and
only it, on a `tools/` directory put first on PATH, with uv's cache inside the session's directory).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pytest
from filelock import FileLock
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

DOCTOR = Path(sys.executable).with_name("tfdoctor")
BASE_DISTRIBUTION = "tensorflow-cpu"  # what the test setup installs on Linux x86-64 (pyproject's [test])
# What a user runs to know the environment works: TensorFlow imports and a Keras layer builds.
TENSORFLOW_WORKS = "import tensorflow as tf; layer = tf.keras.layers.Dense(2); print('works', tf.__version__, type(layer).__module__)"
PIP_TIMEOUT = 900
DOCTOR_TIMEOUT = 300
FIX_TIMEOUT = 3600  # the plan twice (on the fixer's copy, then for real) and the doctor three times
# The distributions that install the `tensorflow` package; an environment should hold exactly one.
TENSORFLOW_BUILDS = frozenset({"tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos",
                               "tensorflow-aarch64", "tf-nightly", "tf-nightly-cpu"})
WHEELHOUSE = "live-wheelhouse"  # in the run's temporary root; the root conftest.py removes it when the run ends
SHARED_BASE = "live-base"  # beside it: the run's one base environment, which every live module clones (shared_base)
_DOWNLOADING = re.compile(r"Downloading \S+ \(([\d.]+) (kB|MB|GB)\)")
_UNIT = {"kB": 1e3, "MB": 1e6, "GB": 1e9}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip off CI; in CI a live suite that cannot run is a failure, never a silent skip."""
    if in_ci():
        pytest.fail(f"live suite cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def platform_reason() -> str | None:
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return f"live environments are built on Linux x86-64 only (this is {sys.platform} {platform.machine()})"
    return None


def downloaded_bytes(pip_output: str) -> int:
    """Bytes pip fetched over the network, from its own 'Downloading name (size)' lines (cache hits and
    local indexes print no such line)."""
    return int(sum(float(n) * _UNIT[unit] for n, unit in _DOWNLOADING.findall(pip_output)))


def clean_environ(**extra: str) -> dict[str, str]:
    """The caller's environment without what would point a command at another Python, Keras or uv
    setup; within a session, the session's tools/ first on PATH and uv's cache in the session."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "TF_USE_LEGACY_KERAS"} and not k.startswith("UV_")}
    if LEDGER.workdir:
        env["PATH"] = f"{tools_dir()}{os.pathsep}{env.get('PATH', '')}"
        env["UV_CACHE_DIR"] = str(Path(LEDGER.workdir) / "uv-cache")
        env["UV_PYTHON_DOWNLOADS"] = "never"
    env.update(extra)
    return env


def tools_dir() -> Path:
    return Path(LEDGER.workdir) / "tools"


def provide_uv() -> Path:
    """Link the uv that the test setup installs beside the tests into the session's tools/ (alone: the
    tests' own python and pip must not be found before a target's)."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        unavailable("uv is missing beside the tests (pyproject's [test] extra installs it)")
    tools_dir().mkdir(parents=True, exist_ok=True)
    link = tools_dir() / "uv"
    if not link.exists():
        link.symlink_to(uv)
    return link


def python_of(minor: str) -> Path:
    """An interpreter of that minor ("3.11"): the tests' own base Python when it is one, else pyenv's newest, else
    `python3.X` on PATH (actions/setup-python's, in the nightly workflow)."""
    if minor == f"{sys.version_info.major}.{sys.version_info.minor}":
        return Path(getattr(sys, "_base_executable", None) or sys.executable)
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found = [p for p in (pyenv / "versions").glob(f"{minor}.*/bin/python") if re.fullmatch(r"\d+\.\d+\.\d+", p.parent.parent.name)]
    if found:
        return max(found, key=lambda p: Version(p.parent.parent.name))
    on_path = shutil.which(f"python{minor}")
    if on_path is None:
        unavailable(f"no Python {minor} here (looked for {pyenv}/versions/{minor}.* and python{minor} on PATH)")
    return Path(on_path)


def dependency_closure(root: str) -> dict[str, str]:
    """Exact versions of `root` and everything it requires (markers evaluated here, no extras), as
    installed in the interpreter running the tests."""
    pins: dict[str, str] = {}
    todo = [root]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in pins:
            continue
        dist = metadata.distribution(name)
        pins[name] = dist.version
        for line in dist.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return pins


def site_packages(env: Path) -> Path:
    found = list(env.glob("lib/python3.*/site-packages"))
    assert len(found) == 1, f"{env} has {len(found)} site-packages directories: {found}"
    return found[0]


def installed(env: Path) -> dict[str, metadata.Distribution]:
    return {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions(path=[str(site_packages(env))])}


def freeze(env: Path) -> list[str]:
    """`name==version` of every distribution in the environment (pip's freeze --all, without needing pip)."""
    return sorted(f"{name}=={dist.version}" for name, dist in installed(env).items())


def tensorflow_builds(env: Path) -> dict[str, str]:
    return {name: dist.version for name, dist in installed(env).items() if name in TENSORFLOW_BUILDS}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def installed_bytes(env: Path) -> dict[str, tuple[int, str] | None]:
    """Every RECORD of the environment and every file a RECORD lists with a sha256, as they are now:
    (size, sha256), None for a missing file. Equal before and after means byte for byte the same install."""
    root = site_packages(env)
    state: dict[str, tuple[int, str] | None] = {}
    for record in sorted(root.glob("*.dist-info/RECORD")):
        listed = [record.relative_to(root).as_posix()]
        with record.open(newline="", encoding="utf-8") as rows:
            listed += [row[0] for row in csv.reader(rows) if len(row) >= 2 and row[1].startswith("sha256=")]
        for relative in listed:
            path = Path(os.path.normpath(root / relative))
            state[relative] = (path.stat().st_size, _sha256(path)) if path.is_file() else None
    return state


@dataclass
class Ledger:
    """What the suite cost and saw, printed at the end of the run (tests/live/conftest.py)."""

    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    download_bytes: int = 0
    wheelhouse_bytes: int = 0
    base_seconds: float = 0.0
    workdir: str | None = None
    cases: dict[str, dict] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # environments are built in a second thread

    def pip_output(self, text: str) -> int:
        fetched = downloaded_bytes(text)
        with self._lock:
            self.download_bytes += fetched
        return fetched

    def note(self, case: str, **values) -> None:
        with self._lock:
            self.cases.setdefault(case, {}).update(values)


LEDGER = Ledger()


def selected_items(request, module_name: str) -> list:
    """The session's items of one live module that are parametrized by a `case` (the cases this session
    runs, after -k). Only that module's: the other live modules parametrize a `case` of their own kinds."""
    module = sys.modules[module_name]
    return [item for item in request.session.items if getattr(item, "module", None) is module
            and getattr(item, "callspec", None) and "case" in item.callspec.params]


def run(args, *, env=None, timeout=PIP_TIMEOUT, shell=False) -> subprocess.CompletedProcess:
    # A neutral working directory: Python puts it on the target's sys.path, and the repository's own
    # tfdoctor.egg-info there would show up as an installed distribution of the target.
    return subprocess.run(args, capture_output=True, text=True, env=env or clean_environ(), timeout=timeout,
                          shell=shell, executable="/bin/bash" if shell else None, cwd=LEDGER.workdir)


def pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    completed = run([str(python), "-m", "pip", *args])
    LEDGER.pip_output(completed.stdout + completed.stderr)
    return completed


def require(completed: subprocess.CompletedProcess, what: str) -> None:
    assert completed.returncode == 0, f"{what} failed ({completed.returncode}):\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}"


def wheelhouses(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's one wheelhouse, a directory for each Python minor in it, shared by every live module on every
    xdist worker (in their temporary roots' parent): each wheel is downloaded once (fetch_wheels)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the controller's, which removes it at the end (the root conftest.py)
    return root / WHEELHOUSE


def _wheels_in(wheelhouse: Path) -> dict[str, Path]:
    wheels = {}
    for wheel in wheelhouse.glob("*.whl"):
        name, version, _, _ = parse_wheel_filename(wheel.name)
        wheels[f"{name}=={version}"] = wheel
    return wheels


def _pinned(spec: str) -> str:
    """`name==version` as the wheelhouse's keys spell it (canonical name, normalized version)."""
    requirement = Requirement(spec)
    return f"{canonicalize_name(requirement.name)}=={Version(next(iter(requirement.specifier)).version)}"


def fetch_wheels(wheelhouse: Path, specs: list[str], python_minor: str) -> dict[str, Path]:
    """Download exactly these releases (`name==version`, no dependencies) for that Python into the wheelhouse,
    those it does not hold yet; {canonical name==version: wheel} of everything in it. Under a file lock (another
    module or worker fetches into the same wheelhouse), into a scratch directory first, then renamed in: a pip
    reading the wheelhouse meanwhile never sees half a wheel. A failure here is the index being unreachable (or
    a release gone): skipped off CI, failed in CI."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{wheelhouse}.lock"):
        held = _wheels_in(wheelhouse)
        missing = [spec for spec in specs if _pinned(spec) not in held]
        scratch = Path(tempfile.mkdtemp(prefix=".fetching-", dir=wheelhouse.parent))
        try:
            for batch in _distinct_names(missing):  # pip refuses two releases of one name in one command
                completed = pip(Path(sys.executable), "download", "--no-deps", "--only-binary=:all:", "--python-version",
                                python_minor, "-d", str(scratch), *batch)
                if completed.returncode != 0:
                    tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
                    unavailable("the package index is unreachable or lacks a release the live cases need: " + " | ".join(tail))
            for wheel in scratch.glob("*.whl"):
                os.replace(wheel, wheelhouse / wheel.name)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return _wheels_in(wheelhouse)


def _distinct_names(specs: list[str]) -> list[list[str]]:
    batches: list[list[str]] = []
    for spec in specs:
        name = canonicalize_name(Requirement(spec).name)
        batch = next((b for b in batches if name not in {canonicalize_name(Requirement(x).name) for x in b}), None)
        if batch is None:
            batches.append(batch := [])
        batch.append(spec)
    return batches


def base_pins() -> dict[str, str]:
    try:
        return dependency_closure(BASE_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        unavailable(f"the test setup installs {BASE_DISTRIBUTION} on Linux x86-64, and it is missing here")


def build_base(env: Path, wheels: list[Path]) -> Path:
    """A venv with the test setup's TensorFlow and its dependency closure (these wheels), --no-deps."""
    started = time.monotonic()
    require(run([str(python_of(f"{sys.version_info.major}.{sys.version_info.minor}")), "-m", "venv", str(env)]),
            "creating the base venv")
    completed = pip(env / "bin" / "python", "install", "--no-deps", *map(str, wheels))
    if completed.returncode != 0:
        unavailable("cannot install the test setup's TensorFlow into the base environment: "
                    + (completed.stderr or completed.stdout).strip()[-500:])
    LEDGER.base_seconds = time.monotonic() - started
    return env


def shared_base(tmp_path_factory: pytest.TempPathFactory, wheels: list[Path], target: Path) -> Path:
    """A hard-link copy at `target` of the run's one base environment (these wheels, build_base), which is built
    once, beside the wheelhouse, by the first live module on any worker that asks (under a file lock: another
    waits for it), instead of once per module: ~80 s and ~1.3 GB a module. Nothing writes into an existing file
    of a copy (clone), so the shared base stays as built; the root conftest.py removes it when the run ends."""
    started = time.monotonic()
    root = wheelhouses(tmp_path_factory).parent
    shared, built = root / SHARED_BASE, root / f"{SHARED_BASE}.built"
    with FileLock(f"{shared}.lock"):
        if not built.exists():  # a build cut short (a skip, a failure) is started again
            shutil.rmtree(shared, ignore_errors=True)
            build_base(shared, wheels)
            built.write_text(json.dumps(sorted(wheel.name for wheel in wheels)), encoding="utf-8")
        assert json.loads(built.read_text(encoding="utf-8")) == sorted(wheel.name for wheel in wheels), (
            "the live modules ask for one base environment, from the same wheels")
    clone(shared, target)
    LEDGER.base_seconds = time.monotonic() - started  # this module's share: building, or waiting for it, and its copy
    return target


def build_resolved(env: Path, python: Path, requirements: tuple[str, ...]) -> int:
    """A fresh venv of that Python with its own pip (ensurepip's), then `pip install <requirements>`:
    pip's resolver picks every other release, as it does for a user today. Returns the bytes pip fetched."""
    require(run([str(python), "-m", "venv", str(env)]), f"creating {env.name}")
    completed = run([str(env / "bin" / "python"), "-m", "pip", "install", *requirements])
    fetched = LEDGER.pip_output(completed.stdout + completed.stderr)
    if completed.returncode != 0:
        unavailable(f"pip cannot install {' '.join(requirements)} from the index: "
                    + (completed.stderr or completed.stdout).strip()[-500:])
    return fetched


def uv(*args: str) -> subprocess.CompletedProcess:
    return run([str(provide_uv()), *args])


def build_with_uv(env: Path, python: Path, wheels: list[Path]) -> None:
    """`uv venv` (no pip inside) and `uv pip install --no-deps` of these wheels."""
    require(uv("venv", "--python", str(python), str(env)), f"uv venv {env.name}")
    require(uv("pip", "install", "--python", str(env / "bin" / "python"), "--no-deps", *map(str, wheels)),
            f"uv pip install into {env.name}")


def clone(source: Path, target: Path) -> Path:
    """A hard-link copy of a venv (seconds, no disk). Scripts in bin/ keep the source's shebang, so the
    harness calls `<copy>/bin/python -m pip`, which is what the doctor's commands do too."""
    if target.exists():
        shutil.rmtree(target)
    require(run(["cp", "-al", str(source), str(target)]), f"cp -al {source} {target}")
    return target


def run_doctor(env: Path, extra_env: dict[str, str], keep: Path, beyond_tables: tuple[str, ...] = ()) -> dict:
    """The doctor as a user runs it on that environment; its report is kept at `keep`, and judged again without
    the child's facts (`check_stripped`)."""
    completed = run([str(DOCTOR), "--python", str(env / "bin" / "python"), "--json", "--no-redact", "--no-probe"],
                    env=clean_environ(**extra_env), timeout=DOCTOR_TIMEOUT)
    assert completed.returncode in (0, 1), f"doctor exited {completed.returncode}: {completed.stderr[-2000:]}"
    keep.parent.mkdir(parents=True, exist_ok=True)
    keep.write_text(completed.stdout, encoding="utf-8")
    report = json.loads(completed.stdout)
    check_stripped(report, keep.stem, beyond_tables)
    report["_exit"] = completed.returncode
    return report


def check_stripped(report: dict, name: str, beyond_tables: tuple[str, ...] = ()) -> None:
    """Issue 38: every live report, as a saved report without the child's facts (an older report; distributions
    alone), reaches the same verdict in the checks whose rules read the child's import facts, wherever the tables
    know the installed releases (tests/stripped_support.py). `beyond_tables`: checks whose verdict here rests on
    what no table holds (a keras.json, a traced function), which may then pass or skip but not invent a problem."""
    from tests.stripped_support import live_differences

    found, unknown = live_differences(report, beyond_tables)
    if unknown:
        warnings.warn(f"{name}: stripped report not compared, the tables lack {', '.join(unknown)}", stacklevel=2)
    assert not found, f"{name}: without the child's facts the report reaches another verdict: {found}"


def tensorflow_works(env: Path, extra_env: dict[str, str], imports: tuple[str, ...] = ()) -> tuple[bool, str]:
    """TensorFlow imports and a Keras layer builds (and these modules import, e.g. a companion's)."""
    code = "".join(f"import {module}; " for module in imports) + TENSORFLOW_WORKS
    completed = run([str(env / "bin" / "python"), "-c", code], env=clean_environ(**extra_env), timeout=DOCTOR_TIMEOUT)
    lines = (completed.stdout + completed.stderr).strip().splitlines()
    return completed.returncode == 0, "\n".join(lines[-6:])


def problems(report: dict, *statuses: str) -> list[dict]:
    return [r for r in report["results"] if r["status"] in statuses]


def _normal(text: str) -> str:
    return text.lower().replace("_", "-")


def result_text(result: dict) -> str:
    remedy = result.get("remediation") or {}
    parts = [result.get("summary", ""), *result.get("details", ()), remedy.get("advice", ""), *remedy.get("commands", ())]
    return _normal("\n".join(p for p in parts if p))


def names_cause(result: dict, tokens: tuple[str, ...]) -> bool:
    """The finding names the cause: every token appears in what it says (summary, details, advice,
    commands), `_` and `-` alike, any case; and it offers a remediation."""
    text = result_text(result)
    return bool(result.get("remediation")) and all(_normal(t) in text for t in tokens)


def plan_commands(report: dict) -> list[str]:
    """What `tfdoctor fix` runs: the commands of the report's plan whose steps are not manual, in order."""
    return [step["command"] for step in report["plan"]["steps"] if not step["manual"]]


def pasted_commands(report: dict) -> list[str]:
    """What a user pastes: every step of the report's plan, in order, those for the shell (export, unset) too."""
    return [step["command"] for step in report["plan"]["steps"]]


def manual_commands(report: dict) -> list[str]:
    """The plan's steps for the user's shell or project, which `tfdoctor fix` names and leaves to the user."""
    return [step["command"] for step in report["plan"]["steps"] if step["manual"]]


def tfdoctor_fix(env: Path, extra_env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`tfdoctor fix --python <env>/bin/python <args>` as a script runs it (no terminal)."""
    completed = run([str(DOCTOR), "fix", "--python", str(env / "bin" / "python"), *args], env=clean_environ(**extra_env),
                    timeout=FIX_TIMEOUT)
    LEDGER.pip_output(completed.stdout + completed.stderr)
    return completed


def paste(commands: list[str], env: Path, extra_env: dict[str, str]) -> tuple[list[dict], dict[str, str]]:
    """Paste the commands, in order, into ONE bash session, as a user with the environment activated does: a
    step that exports or unsets a variable holds for the steps after it and for what the user runs in that
    shell afterwards. Stops at the first that fails (a user would). Returns what each command did, and
    `extra_env` as the session ends with it (what it exported added, what it unset gone), for what runs next."""
    shell_env = clean_environ(**extra_env, VIRTUAL_ENV=str(env))
    shell_env["PATH"] = f"{env / 'bin'}{os.pathsep}{shell_env['PATH']}"
    where = Path(tempfile.mkdtemp(prefix="paste-", dir=LEDGER.workdir))
    try:
        def file(name: str) -> str:
            return shlex.quote(str(where / name))

        script = ["set +e"]
        for number, command in enumerate(commands):
            # a brace group runs in the session itself: an export stays; its output and status go to files
            script += ["{", command, f"}} >{file(f'{number}.out')} 2>&1", f"echo $? >{file(f'{number}.exit')}",
                       f'[ "$(cat {file(f"{number}.exit")})" = 0 ] || exit 0']
        script.append(f"env -0 >{file('environment')}")
        completed = run("\n".join(script) + "\n", env=shell_env, shell=True, timeout=PIP_TIMEOUT * max(1, len(commands)))
        assert completed.returncode == 0, f"the pasting shell itself failed: {completed.stderr[-2000:]}"
        ran = []
        for number, command in enumerate(commands):
            if not (where / f"{number}.exit").exists():
                break
            output = (where / f"{number}.out").read_text(encoding="utf-8", errors="replace")
            ran.append({"command": command, "exit": int((where / f"{number}.exit").read_text().strip()),
                        "fetched": LEDGER.pip_output(output), "output": "\n".join(output.strip().splitlines()[-8:])})
        after = dict(extra_env)
        if (where / "environment").exists():
            ended = dict(item.split("=", 1) for item in (where / "environment").read_text(encoding="utf-8").split("\0")
                         if "=" in item)
            for name in set(ended) | set(shell_env):
                if name in ("PATH", "VIRTUAL_ENV", "PWD", "OLDPWD", "SHLVL", "_"):
                    continue
                if name not in ended:
                    after.pop(name, None)
                elif ended[name] != shell_env.get(name):
                    after[name] = ended[name]
        return ran, after
    finally:
        shutil.rmtree(where, ignore_errors=True)


def verdict_line(report: dict) -> str:
    """`check:status` for every check that did not pass or skip."""
    return ", ".join(f"{r['id']}:{r['status']}" for r in report["results"] if r["status"] not in {"pass", "skip"}) or "all pass"
