"""Every run uses all cores with pytest-xdist unless told otherwise (`-n N` or `--dist` chooses for itself;
`-n 0` or `-p no:xdist` runs serially). Whole files go to a worker, so a module's shared fixture runs once.
A run that includes the live suite (CI's plain `pytest`) also keeps the whole live suite (tests/live/, every
module there marked live: tests/project/test_layout.py) on one worker and starts it first: its session
fixtures build the environments once, there, while the other workers run the fast files beside it. The
ledger the live worker fills (tests/live/conftest.py) is printed here, by the controller.

Here at the root, not in tests/: the choice is made before any test module is collected."""

from __future__ import annotations

import pytest

LIVE_DIR = "tests/live/"
_LIVE_FIRST = pytest.StashKey[bool]()
_LEDGER_LINES = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads these options
def pytest_cmdline_main(config: pytest.Config) -> None:
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return  # a worker runs this hook too (with the controller's options): it must not start workers of its own
    if config.option.numprocesses is not None or config.option.dist != "no":
        return
    config.option.numprocesses = "auto"
    config.option.dist = "loadfile"
    config.stash[_LIVE_FIRST] = "not live" not in (config.option.markexpr or "")


@pytest.hookimpl(optionalhook=True)  # an xdist hook, on the controller
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if not config.stash.get(_LIVE_FIRST, False):
        return None  # xdist's own loadfile
    from xdist.scheduler import LoadScopeScheduling

    class LiveSuiteFirst(LoadScopeScheduling):
        """loadfile, except that the live suite is one unit, first. (xdist's loadgroup renames node ids,
        which pytest 9.2 no longer lets a plugin do.)"""

        def _split_scope(self, nodeid: str) -> str:
            return LIVE_DIR if nodeid.startswith(LIVE_DIR) else nodeid.split("::", 1)[0]

    config.option.loadscopereorder = False  # collection order, in which the live suite comes first (below)
    return LiveSuiteFirst(config, log)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: a worker gets the command line, not the choice made above
def pytest_configure_node(node) -> None:
    node.workerinput["tfdoctor_live_first"] = node.config.stash.get(_LIVE_FIRST, False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if getattr(config, "workerinput", {}).get("tfdoctor_live_first"):
        items[:] = ([item for item in items if item.nodeid.startswith(LIVE_DIR)]
                    + [item for item in items if not item.nodeid.startswith(LIVE_DIR)])


@pytest.hookimpl(optionalhook=True)  # an xdist hook: the controller learns what the live worker counted
def pytest_testnodedown(node, error) -> None:
    lines = getattr(node, "workeroutput", {}).get("live_ledger_lines")
    if lines:
        node.config.stash.setdefault(_LEDGER_LINES, []).extend(lines)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    lines = config.stash.get(_LEDGER_LINES, [])
    if lines:
        terminalreporter.section("live environments")
        for line in lines:
            terminalreporter.write_line(line)
