"""The fast suite (`pytest -m "not live"`) runs on every core with pytest-xdist, whole files per worker
(`--dist loadfile`: a module's shared fixture runs once). A run that may include the live suite stays in
one process: its session fixture builds environments once and tests/live/conftest.py prints its ledger
there. `-n N` chooses for itself; `-n 0` or `-p no:xdist` runs serially.

Here at the root, not in tests/: the choice is made before any test module is collected."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads these options
def pytest_cmdline_main(config: pytest.Config) -> None:
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return  # a worker runs this hook too (with the controller's options): it must not start workers of its own
    chosen = config.option.numprocesses is not None or config.option.dist != "no"
    if not chosen and "not live" in (config.option.markexpr or ""):
        config.option.numprocesses = "auto"
        config.option.dist = "loadfile"
