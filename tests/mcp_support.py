"""What the tests of `tfdoctor mcp` share (tests/mcp/): the SDK's in-memory client on a fresh server, and
a real broken environment built offline, the way tests/plan/test_fix_offline.py builds it: a venv holding
a fake tensorflow-cpu wheel whose declared pin (fakedep>=2) is violated by fakedep 1.0, with a local
wheel directory standing in for the index (pip's own PIP_NO_INDEX and PIP_FIND_LINKS)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from tests.fixer_support import build_world, run as _run

pytest.importorskip("mcp.server", reason="the MCP SDK (the [mcp] extra, Python >= 3.10) is not installed")



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
        """What the server's process needs so the plan's pip steps find the local wheels only, and its locks
        and records of detached fixes stay in the world's own cache (never the user's)."""
        return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(self.wheels), "FAKE_TF_MODE": "cpu", "NO_COLOR": "1",
                "XDG_CACHE_HOME": str(self.root / "cache")}

    def copy(self, name: str) -> Path:
        target = self.root / name
        assert _run(["cp", "-a", self.base, target]).returncode == 0  # a real copy: each test owns its files
        return target


def build_broken_world(root: Path) -> BrokenWorld:
    wheels, base, _ = build_world(root)
    return BrokenWorld(root, wheels, base)

