"""Every run uses all cores with pytest-xdist unless told otherwise (`-n N` or `--dist` chooses for itself;
`-n 0` or `-p no:xdist` runs serially). Whole files go to a worker, so a module's shared fixture runs once.
A run that includes the live suite (CI's plain `pytest`) also starts with the live modules (tests/live/, every
module there marked live: tests/project/test_layout.py), the one with the most tests first: each is a unit of
its own, so the two biggest start at once on two workers and the live suite (about half the run's work) is
shared by the cores instead of being the critical path on one; the fast files then fill in behind them. A live module's
fixtures build its environments once, on its worker. The ledger each live worker fills (tests/live/conftest.py)
is printed here, by the controller.

Here at the root, not in tests/: the choice is made before any test module is collected."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

LIVE_DIR = "tests/live/"
# tests/live/support.WHEELHOUSE and SHARED_BASE: the live modules' one wheelhouse and one base environment, shared
# by the workers (with the base's lock and its mark of a finished build)
LIVE_SHARED = ("live-wheelhouse", "live-base", "live-base.built", "live-base.lock")
_LIVE_FIRST = pytest.StashKey[bool]()
_LEDGER_LINES = pytest.StashKey[list]()
_WIDE_LEFT_OUT = pytest.StashKey[int]()
# set to 1, the run includes the live suite's wide tier (the tests marked `wide`), as the nightly workflow does
WIDE_RUN = "TFDOCTOR_LIVE_WIDE"


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
    from xdist.scheduler import LoadFileScheduling

    # loadfile in the collection's order (below: the live modules first, the biggest first), not xdist's
    # default reordering by each file's count of tests, which would put big fast files before small live ones
    config.option.loadscopereorder = False
    return LoadFileScheduling(config, log)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: a worker gets the command line, not the choice made above
def pytest_configure_node(node) -> None:
    node.workerinput["tfdoctor_live_first"] = node.config.stash.get(_LIVE_FIRST, False)


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _wide_run() -> bool:
    return os.environ.get(WIDE_RUN) == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _wide_run():
        # every commit's run (CI's plain `pytest`) leaves the wide tier's live cases out: each mechanism's path through
        # the doctor, its plan and `tfdoctor fix` stays in it once (docs/testing.md, "Two tiers"); the same on every
        # xdist worker, so their collections agree
        wide = [item for item in items if item.get_closest_marker("wide") is not None]
        if wide:
            config.hook.pytest_deselected(items=wide)
            items[:] = [item for item in items if item.get_closest_marker("wide") is None]
            config.stash[_WIDE_LEFT_OUT] = len(wide)
    if getattr(config, "workerinput", {}).get("tfdoctor_live_first"):
        live = [item for item in items if item.nodeid.startswith(LIVE_DIR)]
        size = Counter(_module(item) for item in live)
        # sorted() is stable: a module's tests keep their order, and modules of one size theirs
        items[:] = (sorted(live, key=lambda item: -size[_module(item)])
                    + [item for item in items if not item.nodeid.startswith(LIVE_DIR)])


@pytest.hookimpl(optionalhook=True)  # an xdist hook: the controller learns what each live worker counted
def pytest_testnodedown(node, error) -> None:
    output = getattr(node, "workeroutput", {})
    # every worker deselects the same wide tests; the controller, which collects none, says how many
    node.config.stash[_WIDE_LEFT_OUT] = max(node.config.stash.get(_WIDE_LEFT_OUT, 0), output.get("wide_left_out", 0))
    lines = output.get("live_ledger_lines")
    if lines:
        node.config.stash.setdefault(_LEDGER_LINES, []).extend(lines)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    left_out = config.stash.get(_WIDE_LEFT_OUT, 0)
    if left_out and not hasattr(config, "workerinput"):
        terminalreporter.write_line(f"live suite: {left_out} tests of the wide tier left out ({WIDE_RUN}=1 runs them; "
                                    ".github/workflows/live-wide.yml does, nightly)")
    lines = config.stash.get(_LEDGER_LINES, [])
    if lines:
        terminalreporter.section("live environments")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The live suite's shared wheelhouse and base (tests/live/support.wheelhouses) go when the run ends, removed by the
    process whose temporary root holds it: the controller under xdist (every worker is done), else the session."""
    if hasattr(session.config, "workerinput"):
        session.config.workeroutput["wide_left_out"] = session.config.stash.get(_WIDE_LEFT_OUT, 0)
        return
    if os.environ.get("TFDOCTOR_LIVE_KEEP"):
        return
    # pytest's own attributes: getbasetemp() would make a temporary root for a run that asked for none
    basetemp = getattr(getattr(session.config, "_tmp_path_factory", None), "_basetemp", None)
    if basetemp is not None:
        for name in LIVE_SHARED:
            shared = Path(basetemp) / name
            if shared.is_dir():
                shutil.rmtree(shared, ignore_errors=True)
            else:
                shared.unlink(missing_ok=True)
