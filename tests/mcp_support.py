"""What the tests of `tfdoctor mcp` share (tests/mcp/): the SDK's in-memory client on a fresh server, and
a real broken environment built offline, the way tests/plan/test_fix_offline.py builds it: a venv holding
a fake tensorflow-cpu wheel whose declared pin (fakedep>=2) is violated by fakedep 1.0, with a local
wheel directory standing in for the index (pip's own PIP_NO_INDEX and PIP_FIND_LINKS)."""

from __future__ import annotations

import hashlib
import os
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from tests.fakes import HERE as FAKES
from tests.fixer_support import link_distribution as _link_distribution, run as _run, wheel as _wheel

pytest.importorskip("mcp.server", reason="the MCP SDK (the [mcp] extra, Python >= 3.10) is not installed")

TF_VERSION = "2.21.0"


@asynccontextmanager
async def connected(allow_fix: bool = False) -> AsyncIterator[Any]:
    """The SDK's client connected in memory to a new server (its own session)."""
    from mcp.client.client import Client

    from tfdoctor.servers.mcp import build_server

    async with Client(build_server(allow_fix)) as client:
        yield client


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text if result.content else result
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


@dataclass(frozen=True)
class BrokenWorld:
    root: Path
    wheels: Path
    base: Path  # the broken venv every test copies

    def environ(self) -> dict[str, str]:
        """What the server's process needs so the plan's pip steps find the local wheels only."""
        return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(self.wheels), "FAKE_TF_MODE": "cpu", "NO_COLOR": "1"}

    def copy(self, name: str) -> Path:
        target = self.root / name
        assert _run(["cp", "-a", self.base, target]).returncode == 0  # a real copy: each test owns its files
        return target


def build_broken_world(root: Path) -> BrokenWorld:
    wheels = root / "wheels"
    wheels.mkdir()
    fake = (FAKES / "functional_tensorflow.py").read_text(encoding="utf-8")
    _wheel(wheels, "tensorflow-cpu", TF_VERSION, {"tensorflow/__init__.py": fake.replace('"2.99.0"', repr(TF_VERSION))},
           ("fakedep>=2", "numpy"))
    _wheel(wheels, "fakedep", "1.0", {"fakedep/__init__.py": "VERSION = 1\n"})
    _wheel(wheels, "fakedep", "2.0", {"fakedep/__init__.py": "VERSION = 2\n"})
    base = root / "base"
    python = Path(getattr(sys, "_base_executable", sys.executable))
    assert _run([python, "-m", "venv", "--without-pip", base]).returncode == 0
    site = next((base / "lib").glob("python3*/site-packages"))
    import numpy
    import pip

    for package in (numpy, pip):
        _link_distribution(Path(package.__file__).parent, site)
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    installed = _run([base / "bin" / "python", "-m", "pip", "install", "--no-deps", "tensorflow-cpu==" + TF_VERSION,
                      "fakedep==1.0"], env=env)
    assert installed.returncode == 0, installed.stderr
    return BrokenWorld(root, wheels, base)


def freeze(env_dir: Path) -> list[str]:
    out = _run([env_dir / "bin" / "python", "-I", "-c",
                "import importlib.metadata as m; print('\\n'.join(sorted(d.metadata['Name'].lower() + '==' + d.version "
                "for d in m.distributions())))"])
    return out.stdout.split()


def hashes(env_dir: Path) -> dict[str, str]:
    """sha256 of every file of the environment (symlinks by their target), the fixer's state aside."""
    found = {}
    for path in sorted(env_dir.rglob("*")):
        if ".tfdoctor" in path.parts or "__pycache__" in path.parts:
            continue
        if path.is_symlink():
            found[str(path.relative_to(env_dir))] = "-> " + os.readlink(path)
        elif path.is_file():
            found[str(path.relative_to(env_dir))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found
