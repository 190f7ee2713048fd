"""Fake `tensorflow` packages for tests, written into a temporary directory that goes on PYTHONPATH of
the doctor run as a real subprocess (its TensorFlow child inherits the environment, so it imports the
fake). Each fake does at import what a broken TensorFlow does: dies of a signal, hangs, raises an
ImportError with a real error text, floods stderr; or, the functional fake, works on NumPy with a
"GPU" that misbehaves in a chosen way (functional_tensorflow.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent

# Every fake appends its pid (and the pids of what it starts) to $FAKE_TF_PIDFILE, so a test can
# check that nothing survives the doctor.
PRELUDE = """\
import os, sys
def _note_pid(pid):
    if os.environ.get("FAKE_TF_PIDFILE"):
        with open(os.environ["FAKE_TF_PIDFILE"], "a") as handle:
            handle.write("%d\\n" % pid)
_note_pid(os.getpid())
"""


def install(root: Path, body: str, version: str = "2.99.0") -> Path:
    """root/tensorflow/__init__.py = PRELUDE + body, with dist-info metadata like a pip install."""
    package = root / "tensorflow"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(PRELUDE + body, encoding="utf-8")
    dist = root / f"tensorflow-{version}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: tensorflow\nVersion: {version}\n", encoding="utf-8")
    (dist / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (dist / "top_level.txt").write_text("tensorflow\n", encoding="utf-8")
    _write_record(root, dist, package)
    return root


def _write_record(root: Path, dist: Path, package: Path) -> None:
    """RECORD as pip writes it (paths relative to the site directory): pip can uninstall what has one."""
    files = sorted(p for p in (*package.rglob("*"), *dist.iterdir()) if p.is_file())
    lines = [f"{p.relative_to(root).as_posix()},," for p in files] + [f"{dist.name}/RECORD,,"]
    (dist / "RECORD").write_text("\n".join(lines) + "\n", encoding="utf-8")


def install_keras(root: Path, package: str = "keras", version: str = "3.99.0", layer_error: str | None = None) -> Path:
    """A fake Keras package (keras or tf_keras) with dist-info: Dense(2) works on NumPy, or raises
    ImportError(layer_error) when built, as a Keras that does not fit the installed TensorFlow does."""
    module = root / package
    (module / "layers").mkdir(parents=True, exist_ok=True)
    (module / "__init__.py").write_text(f"__version__ = {version!r}\nfrom {package} import layers\n", encoding="utf-8")
    call = (f"        raise ImportError({layer_error!r})\n" if layer_error else
            "        import numpy as np, tensorflow as tf\n"
            "        return tf.Tensor(np.ones((1, self.units), dtype=np.float32), '/CPU:0')\n")
    (module / "layers" / "__init__.py").write_text(
        "class Dense(object):\n    def __init__(self, units):\n        self.units = units\n\n"
        "    def __call__(self, x):\n" + call, encoding="utf-8")
    name = package.replace("_", "-")
    dist = root / f"{package}-{version}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    (dist / "top_level.txt").write_text(f"{package}\n", encoding="utf-8")
    _write_record(root, dist, module)
    return root


def functional(root: Path) -> Path:
    return install(root, (HERE / "functional_tensorflow.py").read_text(encoding="utf-8"))


def dies_of(signal_name: str) -> str:
    """The import kills itself with this signal (faulthandler, enabled by the child, re-raises it)."""
    return f"import signal\nos.kill(os.getpid(), signal.{signal_name})\n"


SEGFAULT = "import ctypes\nctypes.string_at(0)\n"  # a real segmentation fault


def aborts_after(stderr_text: str) -> str:
    """Prints a fatal log line as TensorFlow's LOG(FATAL) does, then abort()s."""
    return f"sys.stderr.write({stderr_text!r} + '\\n')\nsys.stderr.flush()\nos.abort()\n"


def raises(text: str, kind: str = "ImportError") -> str:
    return f"raise {kind}({text!r})\n"


HANGS = """\
import subprocess, time
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
_note_pid(helper.pid)
time.sleep(600)
"""


def hanging_python(root: Path) -> Path:
    """An interpreter that hangs at start, before it runs any code it is given: a wrapper around this
    Python whose sitecustomize does what HANGS does (starts a helper, sleeps), noting both pids in
    $FAKE_TF_PIDFILE. Only what runs through the wrapper hangs; `python -V` answers (no site import)."""
    site = root / "hanging-site"
    site.mkdir(parents=True, exist_ok=True)
    # the helper HANGS starts must not load this sitecustomize again (it would start a helper in turn)
    unhook = "os.environ.pop('PYTHONPATH', None)\n"
    (site / "sitecustomize.py").write_text(PRELUDE + unhook + HANGS, encoding="utf-8")
    wrapper = root / "python"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={site}\nexport PYTHONPATH\nexec {sys.executable} \"$@\"\n",
                       encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


def floods_stderr(megabytes: int, first: str, then: str) -> str:
    """Writes `first`, then `megabytes` MB of log lines to stderr, then runs `then`."""
    return (f"sys.stderr.write({first!r} + '\\n')\n"
            f"line = 'W external/fake.cc:1] padding padding padding padding padding padding padding\\n'\n"
            f"for _ in range({megabytes} * 1024 * 1024 // len(line)):\n"
            f"    sys.stderr.write(line)\n"
            f"sys.stderr.flush()\n" + then)


@dataclass
class DoctorRun:
    returncode: int
    report: dict[str, Any] | None
    stdout: str
    stderr: str
    seconds: float
    pids: list[int]

    def result(self, check_id: str) -> dict[str, Any]:
        return next(r for r in self.report["results"] if r["id"] == check_id)

    @property
    def tensorflow(self) -> dict[str, Any]:
        return self.report["facts"]["tensorflow"]


def run_doctor(fake_root: Path, *args: str, extra_env: dict[str, str] | None = None, timeout: float = 120,
               python: str | None = None) -> DoctorRun:
    """`python -m tfdoctor --json ARGS` with the fake first on PYTHONPATH; the fake's pids collected."""
    pidfile = fake_root / "pids.txt"
    env = dict(os.environ)
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    env["PYTHONPATH"] = os.pathsep.join([str(fake_root)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["FAKE_TF_PIDFILE"] = str(pidfile)
    env.update(extra_env or {})
    command = [python or sys.executable, "-m", "tfdoctor", "--json", *args]
    started = time.monotonic()
    completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout,
                               cwd=str(fake_root))
    seconds = time.monotonic() - started
    report = json.loads(completed.stdout) if completed.stdout.strip() else None
    pids = [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []
    return DoctorRun(completed.returncode, report, completed.stdout, completed.stderr, seconds, pids)


def diagnose_in_process(fake_root: Path, monkeypatch, only: tuple[str, ...], experiments: bool = True) -> DoctorRun:
    """tfdoctor.api.diagnose in this process with the fake first on PYTHONPATH: the same collectors and
    TensorFlow child as `run_doctor`, without starting a Python that imports the doctor for each case.
    For the many cases that differ only in what the fake raises; run_doctor covers the command line.
    `experiments=False` is --no-experiments: an import failure's trials run children with PYTHONPATH unset,
    which import the test setup's real TensorFlow (up to the 30 s budget a case on a loaded machine)."""
    from tfdoctor import api

    pidfile = fake_root / "pids.txt"
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake_root)] + (
        [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    monkeypatch.setenv("FAKE_TF_PIDFILE", str(pidfile))
    monkeypatch.chdir(fake_root)  # no pyproject.toml above it: no configuration is read
    started = time.monotonic()
    report = api.diagnose(only=only, experiments=experiments)
    seconds = time.monotonic() - started
    pids = [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []
    document = report.to_dict()
    return DoctorRun(report.exit_code, document, json.dumps(document), "", seconds, pids)


def start_doctor(root: Path, *args: str, **popen: object) -> subprocess.Popen:
    """`python -m tfdoctor ARGS` started, not waited for, with the fake first on PYTHONPATH: for sending it signals."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["FAKE_TF_PIDFILE"] = str(root / "pids.txt")
    return subprocess.Popen([sys.executable, "-m", "tfdoctor", "--timeout", "60", *args], cwd=str(root), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def wait_for_import(root: Path, deadline_s: float = 60) -> list[int]:
    """The pids of the hanging fake and its helper, once both are running."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        pids = (root / "pids.txt").read_text().split() if (root / "pids.txt").exists() else []
        if len(pids) >= 2:
            return [int(p) for p in pids]
        time.sleep(0.05)
    raise AssertionError("the fake TensorFlow never started")


def survivors(pids: list[int], grace_s: float = 2.0) -> list[int]:
    """The pids still running after a short grace (zombies count as gone: they have exited).

    SIGKILL is delivered asynchronously: right after killpg() returns, a process on the other core
    can still show as running for a moment. One that still runs after the grace was not killed."""
    deadline = time.monotonic() + grace_s
    while True:
        alive = []
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    alive.append(pid)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)
