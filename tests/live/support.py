"""Build real TensorFlow environments from the package index, break them, run the doctor on them, and
run the doctor's own commands on a copy, as a user pastes them.

One base environment holds the test setup's own TensorFlow (the `tensorflow-cpu` that `.[test]` installs,
with the exact versions of its dependency closure, installed `--no-deps`: no resolver, no surprise).
Every case is a hard-link copy of it (`cp -al`): pip replaces a file by unlinking it and writing a new
one, and deleting a file only unlinks it, so a copy never changes the base. Nothing here writes into an
existing file of a copy.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

DOCTOR = Path(sys.executable).with_name("tfdoctor")
BASE_DISTRIBUTION = "tensorflow-cpu"  # what the test setup installs on Linux x86-64 (pyproject's [test])
# What a user runs to know the environment works: TensorFlow imports and a Keras layer builds.
TENSORFLOW_WORKS = "import tensorflow as tf; layer = tf.keras.layers.Dense(2); print('works', tf.__version__, type(layer).__module__)"
PIP_TIMEOUT = 900
DOCTOR_TIMEOUT = 300
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
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "TF_USE_LEGACY_KERAS"}}
    env.update(extra)
    return env


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
    return env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def installed(env: Path) -> dict[str, metadata.Distribution]:
    return {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions(path=[str(site_packages(env))])}


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

    def pip_output(self, text: str) -> None:
        self.download_bytes += downloaded_bytes(text)

    def note(self, case: str, **values) -> None:
        self.cases.setdefault(case, {}).update(values)


LEDGER = Ledger()


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


def fetch_wheels(wheelhouse: Path, specs: list[str]) -> dict[str, Path]:
    """Download exactly these releases (no dependencies) once; {canonical name==version: wheel}. A failure
    here is the index being unreachable (or a release gone): skipped off CI, failed in CI."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    completed = pip(Path(sys.executable), "download", "--no-deps", "--only-binary=:all:", "-d", str(wheelhouse), *specs)
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
        unavailable("the package index is unreachable or lacks a release the live cases need: " + " | ".join(tail))
    wheels = {}
    for wheel in wheelhouse.glob("*.whl"):
        name, version, _, _ = parse_wheel_filename(wheel.name)
        wheels[f"{name}=={version}"] = wheel
    LEDGER.wheelhouse_bytes = sum(w.stat().st_size for w in wheels.values())
    return wheels


def build_base(env: Path) -> Path:
    """A venv with the test setup's TensorFlow and its dependency closure, exact versions, --no-deps."""
    started = time.monotonic()
    try:
        pins = dependency_closure(BASE_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        unavailable(f"the test setup installs {BASE_DISTRIBUTION} on Linux x86-64, and it is missing here")
    base_python = Path(getattr(sys, "_base_executable", None) or sys.executable)
    require(run([str(base_python), "-m", "venv", str(env)]), "creating the base venv")
    completed = pip(env / "bin" / "python", "install", "--no-deps", "--only-binary=:all:",
                    *(f"{name}=={version}" for name, version in sorted(pins.items())))
    if completed.returncode != 0:
        unavailable("cannot install the test setup's TensorFlow into the base environment: "
                    + (completed.stderr or completed.stdout).strip()[-500:])
    LEDGER.base_seconds = time.monotonic() - started
    return env


def clone(source: Path, target: Path) -> Path:
    """A hard-link copy of a venv (seconds, no disk). Scripts in bin/ keep the source's shebang, so the
    harness calls `<copy>/bin/python -m pip`, which is what the doctor's commands do too."""
    if target.exists():
        shutil.rmtree(target)
    require(run(["cp", "-al", str(source), str(target)]), f"cp -al {source} {target}")
    return target


def run_doctor(env: Path, extra_env: dict[str, str], keep: Path) -> dict:
    """The doctor as a user runs it on that environment; its report is kept at `keep`."""
    completed = run([str(DOCTOR), "--python", str(env / "bin" / "python"), "--json", "--no-redact", "--no-probe"],
                    env=clean_environ(**extra_env), timeout=DOCTOR_TIMEOUT)
    assert completed.returncode in (0, 1), f"doctor exited {completed.returncode}: {completed.stderr[-2000:]}"
    keep.parent.mkdir(parents=True, exist_ok=True)
    keep.write_text(completed.stdout, encoding="utf-8")
    report = json.loads(completed.stdout)
    report["_exit"] = completed.returncode
    return report


def tensorflow_works(env: Path, extra_env: dict[str, str]) -> tuple[bool, str]:
    completed = run([str(env / "bin" / "python"), "-c", TENSORFLOW_WORKS], env=clean_environ(**extra_env),
                    timeout=DOCTOR_TIMEOUT)
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


def fix_commands(report: dict) -> list[str]:
    """The commands of every failing and warning check, in report order, each once (a user pasting them
    does not run the same line twice)."""
    commands: list[str] = []
    for result in problems(report, "fail", "warn", "error"):
        for command in (result.get("remediation") or {}).get("commands", ()):
            if command not in commands:
                commands.append(command)
    return commands


def paste(commands: list[str], env: Path, extra_env: dict[str, str]) -> list[dict]:
    """Run the commands in order in bash, as a user with the environment activated; stop at the first
    that fails (a user would)."""
    shell_env = clean_environ(**extra_env, VIRTUAL_ENV=str(env), PATH=f"{env / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    ran = []
    for command in commands:
        completed = run(command, env=shell_env, shell=True)
        LEDGER.pip_output(completed.stdout + completed.stderr)
        ran.append({"command": command, "exit": completed.returncode,
                    "output": "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-8:])})
        if completed.returncode != 0:
            break
    return ran


def verdict_line(report: dict) -> str:
    """`check:status` for every check that did not pass or skip."""
    return ", ".join(f"{r['id']}:{r['status']}" for r in report["results"] if r["status"] not in {"pass", "skip"}) or "all pass"
