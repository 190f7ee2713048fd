"""Real Python environments for `tfdoctor scan`, healthy and broken, built cheaply.

Every TensorFlow case is a hard-link copy (`cp -al`) of one venv holding tensorflow-cpu (the test
setup's own venv, `sys.prefix`), then broken one way: an older release installed `--no-deps` over a
pin, a file deleted or replaced, a distribution uninstalled. Copies never change the base: pip and
`unlink` only remove directory entries and write new files, and a file is replaced here by unlinking it
and writing a new one, never by writing into it. The others are a fresh venv without TensorFlow and
environments whose interpreter cannot start. Used by tests/cli/test_scan.py (a few, no network) and
bench/bench_scan.py (twenty; the older releases come from the package index, or pip's cache).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

BASE = Path(sys.prefix)
PIP_TIMEOUT_S = 600


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], None]
    network: bool = False  # installs a release from the package index (or pip's cache)


def site_packages(env: Path) -> Path:
    return env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def run(args: list[str], timeout: float = PIP_TIMEOUT_S) -> None:
    environ = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    completed = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=environ)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({completed.returncode}): {completed.stderr.strip()[-800:]}")


def clone(target: Path) -> Path:
    run(["cp", "-al", str(BASE), str(target)])
    return target


def pip(env: Path, *args: str) -> None:
    run([str(env / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", *args])


def healthy(target: Path) -> None:
    clone(target)


def installed_over(spec: str) -> Callable[[Path], None]:
    def build(target: Path) -> None:
        pip(clone(target), "install", "-q", "--no-deps", "--only-binary=:all:", spec)
    return build


def uninstalled(name: str) -> Callable[[Path], None]:
    def build(target: Path) -> None:
        pip(clone(target), "uninstall", "-q", "-y", name)
    return build


def deleted(relative: str) -> Callable[[Path], None]:
    """A file or package directory of site-packages removed (a half-finished uninstall, a cleanup tool)."""
    def build(target: Path) -> None:
        path = site_packages(clone(target)) / relative
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return build


def altered(relative: str) -> Callable[[Path], None]:
    """A file replaced by a longer one (an edit in place, as people debug): unlinked, then written anew."""
    def build(target: Path) -> None:
        path = site_packages(clone(target)) / relative
        text = path.read_text(encoding="utf-8")
        path.unlink()
        path.write_text(text + "\n# edited by hand\n", encoding="utf-8")
    return build


def fresh_venv(python: str) -> Callable[[Path], None]:
    def build(target: Path) -> None:
        run([python, "-m", "venv", "--without-pip", str(target)])
    return build


def _venv_skeleton(target: Path) -> Path:
    (target / "bin").mkdir(parents=True)
    (target / "pyvenv.cfg").write_text("home = /opt/python-3.8.10/bin\ninclude-system-site-packages = false\n"
                                       "version = 3.8.10\n", encoding="utf-8")
    return target / "bin" / "python"


def dangling_interpreter(target: Path) -> None:
    """The Python a venv was made from was uninstalled: bin/python points nowhere."""
    _venv_skeleton(target).symlink_to("/opt/python-3.8.10/bin/python3.8")


def foreign_interpreter(target: Path) -> None:
    """bin/python is not a program this machine can start (another architecture's binary: exec fails)."""
    python = _venv_skeleton(target)
    python.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x02\x00\xb7\x00" + bytes(44))  # an aarch64 ELF header
    python.chmod(0o755)


def no_interpreter(target: Path) -> None:
    """pyvenv.cfg and nothing else: a venv half deleted."""
    target.mkdir(parents=True)
    (target / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.2\n", encoding="utf-8")


def other_python(version: str) -> str | None:
    """A pyenv Python of another minor version, when this machine has one."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = sorted(root.glob(f"{version}.*/bin/python{version}"))
    return str(candidates[-1]) if candidates else None


def base_python() -> str:
    return str(Path(getattr(sys, "_base_executable", None) or sys.executable).resolve())


FEW = (  # no network, one healthy TensorFlow: tests/cli/test_scan.py
    Case("healthy", healthy),
    Case("deleted-framework-library", deleted("tensorflow/libtensorflow_framework.so.2")),
    Case("fresh-venv-no-tensorflow", fresh_venv(base_python())),
    Case("dangling-interpreter", dangling_interpreter),
    Case("foreign-interpreter", foreign_interpreter),
)


def twenty() -> tuple[Case, ...]:
    """bench/bench_scan.py's twenty: TensorFlow broken a dozen ways, three healthy, four without it."""
    older = other_python("3.9") or base_python()
    return (
        Case("healthy-1", healthy), Case("healthy-2", healthy), Case("healthy-3", healthy),
        Case("protobuf-5.29.5-below-pin", installed_over("protobuf==5.29.5"), network=True),
        Case("ml-dtypes-0.4.1-below-pin", installed_over("ml-dtypes==0.4.1"), network=True),
        Case("numpy-1.25.2-below-pin", installed_over("numpy==1.25.2"), network=True),
        Case("keras-2.15.0", installed_over("keras==2.15.0"), network=True),
        Case("h5py-3.15.1-above-pin", installed_over("h5py==3.15.1"), network=True),
        Case("pip-20.2.4", installed_over("pip==20.2.4"), network=True),
        Case("deleted-framework-library", deleted("tensorflow/libtensorflow_framework.so.2")),
        Case("deleted-python-module", deleted("tensorflow/python/ops/array_ops.py")),
        Case("edited-tensorflow-init", altered("tensorflow/__init__.py")),
        Case("keras-package-deleted", deleted("keras")),
        Case("absl-uninstalled", uninstalled("absl-py")),
        Case("tensorflow-uninstalled", uninstalled("tensorflow-cpu")),
        Case("fresh-venv-no-tensorflow", fresh_venv(base_python())),
        Case("fresh-venv-other-python", fresh_venv(older)),
        Case("dangling-interpreter", dangling_interpreter),
        Case("foreign-interpreter", foreign_interpreter),
        Case("no-interpreter", no_interpreter),
    )


def build_all(cases: tuple[Case, ...], directory: Path) -> dict[str, Path]:
    """Each case in directory/<name>/env (one level down, as projects hold their .venv); {name: env}."""
    built = {}
    for case in cases:
        env = directory / case.name / "env"
        env.parent.mkdir(parents=True, exist_ok=True)
        case.build(env)
        built[case.name] = env
    return built
