"""Small real venvs for `tfdoctor fix` attacks, offline: a venv without pip's own install (the test
environment's pip and NumPy are hard-linked in), a fake `tensorflow-cpu` wheel whose pin on `fakedep`
is violated, a wheel directory standing in for the index (PIP_NO_INDEX, PIP_FIND_LINKS), and, for the
tests that must stop pip in the middle of a step, a loopback HTTP index that can be told to stop
answering (`GatedIndex`).

`doctor(...)` runs the tfdoctor of the checkout these tests live in (its source first on sys.path), so a
copy of the tests run against an older checkout tests that checkout: that is how each attack was
checked to fail on main (see tests/attack/test_fix_survives.py)."""

from __future__ import annotations

import base64
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import Callable, Iterator, Optional

from tests.fakes import HERE as FAKES

CHECKOUT = Path(__file__).resolve().parents[1]
TF_VERSION = "2.21.0"
_LAUNCH = "import sys; sys.path.insert(0, sys.argv.pop(1)); from tfdoctor.__main__ import main; sys.exit(main())"


def doctor_argv(*args: object) -> list[str]:
    return [sys.executable, "-c", _LAUNCH, str(CHECKOUT), *(str(a) for a in args)]


def run(argv, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kwargs)


def wheel(directory: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel made by hand (zip, METADATA, WHEEL, RECORD with hashes), as pip expects."""
    dist = f"{name.replace('-', '_')}-{version}"
    info = f"{dist}.dist-info"
    contents = dict(files)
    contents[f"{info}/METADATA"] = "Metadata-Version: 2.1\nName: {}\nVersion: {}\n{}\n".format(
        name, version, "".join(f"Requires-Dist: {r}\n" for r in requires))
    contents[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: tfdoctor-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    contents[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
    made = directory / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(made, "w") as archive:
        for path, text in contents.items():
            archive.writestr(path, text)
    return made


def offline_environ(wheels: Path | str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"} and not k.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels), PIP_NO_CACHE_DIR="1", FAKE_TF_MODE="cpu", NO_COLOR="1",
               # the doctor's own cache (locks, the rollback records' seals) beside the wheels, never the user's
               XDG_CACHE_HOME=str(Path(wheels).parent / "cache"))
    return env


def link_distribution(package_dir: Path, site: Path) -> None:
    name = package_dir.name
    for entry in package_dir.parent.iterdir():
        if entry.name == name or entry.name.startswith((f"{name}-", f"{name}.libs")):
            shutil.copytree(entry, site / entry.name, copy_function=os.link) if entry.is_dir() else os.link(entry, site / entry.name)


def build_world(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """wheels/ (fake tensorflow-cpu 2.21.0 requiring fakedep>=2; fakedep 1.0 and 2.0) and base/, a venv
    holding tensorflow-cpu and fakedep 1.0: the plan is one step, `pip install fakedep>=2`."""
    wheels = root / "wheels"
    wheels.mkdir()
    fake = (FAKES / "functional_tensorflow.py").read_text(encoding="utf-8")
    wheel(wheels, "tensorflow-cpu", TF_VERSION, {"tensorflow/__init__.py": fake.replace('"2.99.0"', repr(TF_VERSION))},
          ("fakedep>=2", "numpy"))
    wheel(wheels, "fakedep", "1.0", {"fakedep/__init__.py": "VERSION = 1\n"})
    wheel(wheels, "fakedep", "2.0", {"fakedep/__init__.py": "VERSION = 2\n"})
    base = root / "base"
    python = Path(getattr(sys, "_base_executable", sys.executable))
    assert run([python, "-m", "venv", "--without-pip", base]).returncode == 0
    site = site_packages(base)
    import numpy
    import pip

    for package in (numpy, pip):
        link_distribution(Path(package.__file__).parent, site)
    env = offline_environ(wheels)
    installed = run([base / "bin" / "python", "-m", "pip", "install", "--no-deps", "tensorflow-cpu==" + TF_VERSION,
                     "fakedep==1.0"], env=env)
    assert installed.returncode == 0, installed.stderr
    return wheels, base, env


# What the trials' script (tfdoctor/fixer/trials.TRIAL_SCRIPT) needs beyond the fake's Dense layer: tf.function
# (a plain call) and the few tensor operations its Python control flow uses.
_TRIAL_READY = """
def reduce_sum(x):
    return Tensor(np.sum(x.value), x.device)


def function(f):
    return f


Tensor.__add__ = lambda self, other: Tensor(self.value + other, self.device)
Tensor.__sub__ = lambda self, other: Tensor(self.value - other, self.device)
Tensor.__gt__ = lambda self, other: bool(self.value > other)
"""


def build_protobuf_world(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """wheels/ (a fake tensorflow-cpu 2.21.0 requiring protobuf>=5.28.0,<7.0.0 whose import fails as the real one's
    does under protobuf 4: no google.protobuf.runtime_version; and that passes the trials' script otherwise;
    protobuf 4.25.3 and 5.29.5) and base/, a venv holding that TensorFlow and protobuf 4.25.3."""
    wheels = root / "wheels"
    wheels.mkdir()
    fake = (FAKES / "functional_tensorflow.py").read_text(encoding="utf-8").replace('"2.99.0"', repr(TF_VERSION))
    fake = "from google.protobuf import runtime_version as _runtime_version  # protobuf >= 5\n" + fake + _TRIAL_READY
    wheel(wheels, "tensorflow-cpu", TF_VERSION, {"tensorflow/__init__.py": fake}, ("protobuf>=5.28.0,<7.0.0", "numpy"))
    wheel(wheels, "protobuf", "4.25.3", {"google/protobuf/__init__.py": "__version__ = '4.25.3'\n"})
    wheel(wheels, "protobuf", "5.29.5", {"google/protobuf/__init__.py": "__version__ = '5.29.5'\n",
                                         "google/protobuf/runtime_version.py": "OSS_DOMAIN = 'PUBLIC'\n"})
    base = root / "base"
    python = Path(getattr(sys, "_base_executable", sys.executable))
    assert run([python, "-m", "venv", "--without-pip", base]).returncode == 0
    site = site_packages(base)
    import numpy
    import pip

    for package in (numpy, pip):
        link_distribution(Path(package.__file__).parent, site)
    env = offline_environ(wheels)
    installed = run([base / "bin" / "python", "-m", "pip", "install", "--no-deps", "tensorflow-cpu==" + TF_VERSION,
                     "protobuf==4.25.3"], env=env)
    assert installed.returncode == 0, installed.stderr
    return wheels, base, env


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def copy_venv(base: Path, target: Path) -> Path:
    assert run(["cp", "-a", base, target]).returncode == 0  # a real copy: each test owns its files
    return target


def link_venv(base: Path, target: Path) -> Path:
    """A hard-link copy (`cp -al`): new directories, the files shared with `base`. Safe where nothing writes into
    an existing file (pip replaces a file by unlinking it; a restore moves files): a module that uses it checks
    that its base is unchanged at the end. Copying and removing ~100 MB a copy took a minute of a module's time."""
    assert run(["cp", "-al", base, target]).returncode == 0
    return target


def freeze(env_dir: Path) -> list[str]:
    """`name==version` of every distribution the environment's Python sees, isolated from ours."""
    out = run([env_dir / "bin" / "python", "-I", "-c",
               "import importlib.metadata as m; print('\\n'.join(sorted(d.metadata['Name'].lower() + '==' + d.version "
               "for d in m.distributions())))"])
    return out.stdout.split()


_UNHASHED = frozenset({".tfdoctor", "__pycache__"})  # the state directory and bytecode caches, wherever they are


def hashes(env_dir: Path) -> dict[str, str]:
    """sha256 of every file of the environment (symlinks by their target, never followed), its state directory
    and bytecode caches aside: every RECORD's files and the RECORDs themselves. Walked with os.scandir, whose
    entries carry their type: the attack tests call this some 40 times a module on venvs of ~1,600 files, and
    Path.rglob with a stat and a relative_to per path took half of such a test's time (the digests are the same)."""
    found: dict[str, str] = {}
    pending = [(str(env_dir), "")]
    while pending:
        directory, relative = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name in _UNHASHED:
                    continue
                name = os.path.join(relative, entry.name) if relative else entry.name
                if entry.is_symlink():
                    found[name] = "-> " + os.readlink(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, name))
                elif entry.is_file(follow_symlinks=False):
                    digest = hashlib.sha256()
                    with open(entry.path, "rb") as handle:
                        for block in iter(lambda: handle.read(1 << 20), b""):
                            digest.update(block)
                    found[name] = digest.hexdigest()
    return found


def fix(env_dir: Path, env: dict, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return run(doctor_argv("fix", "--python", env_dir / "bin" / "python", "--only", "dependencies", *args),
               env=env, timeout=timeout)


def undo(env_dir: Path, env: dict) -> subprocess.CompletedProcess:
    return run(doctor_argv("fix", "--python", env_dir / "bin" / "python", "--undo", "--yes"), env=env)


class Staged:
    """A tfdoctor run whose stderr progress lines ('tfdoctor fix: <stage>') are read as they come."""

    def __init__(self, argv: list[str], env: dict) -> None:
        self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 120) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in list(self.lines)):
                return True
            if self.process.poll() is not None:
                self._reader.join(5)
                return any(text in line for line in self.lines)
            time.sleep(0.01)
        return False

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        try:
            out = self.process.stdout.read() if self.process.stdout else ""
            self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        return self.process.returncode, out, "".join(self.lines)


class GatedIndex:
    """A loopback find-links page serving a wheel directory; `close()` makes every request from then on
    wait (pip hangs in the middle of its step) until `open()` or the server stops."""

    def __init__(self, directory: Path) -> None:
        gate = self.gate = threading.Event()
        gate.set()

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(directory), **kwargs)

            def do_GET(self):  # noqa: N802 - http.server's name
                gate.wait(300)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.gate.clear()

    def open(self) -> None:
        self.gate.set()

    def stop(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


def processes_using(path: Path, exclude: Optional[Callable[[object], bool]] = None) -> Iterator[object]:
    """Live processes whose command line names `path` (pip writing into the environment)."""
    import psutil

    text = str(path)
    for process in psutil.process_iter(["cmdline", "status"]):
        try:
            if process.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(text in part for part in process.info["cmdline"] or ()):
                if exclude is None or not exclude(process):
                    yield process
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
