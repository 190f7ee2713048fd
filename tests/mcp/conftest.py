"""What every MCP test module shares: the server's process made offline for the module's own `world` (each module
builds its broken world under a name of its own)."""

from __future__ import annotations

import pytest


@pytest.fixture()
def offline(world, monkeypatch, tmp_path):
    """The server's process as a user's would be for the world: pip finds only the local wheels, and no
    pyproject.toml above the working directory (no configuration is read)."""
    for name, value in world.environ().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.chdir(tmp_path)
    return world
