"""The workload child's timing method (tfdoctor/child/workload.py) on a fake clock: blocks last about
BLOCK_S whatever the budget (a longer budget buys more blocks, not longer ones, so a long run measures
what a short run does), they come in PASSES windows with the other sections timed in between (the
budget counts a section's own time), squeezed budgets still get MIN_BLOCKS, and the spread is the
interquartile range over the median, unmoved by one interrupted block."""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tfdoctor" / "child" / "workload.py"


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def workload():
    spec = importlib.util.spec_from_file_location("tfdoctor_workload_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.now = Clock()  # the module's timer: Contender.timed and interleave read it
    return module


def timed(workload, contenders, budget_s: float, gap_s: float = 0.0) -> int:
    """Drive a section's windows to the end, the other sections taking gap_s between two; the yields."""
    yields = 0
    for _ in workload.in_passes(contenders, budget_s, deadline=1e9):
        yields += 1
        workload.now.t += gap_s
    return yields


def steady(workload, name: str, per_rep_s: float, warmup_s: float = 0.0, setup_s: float = 0.0,
           slow_blocks: dict[int, float] | None = None):
    """A contender whose repetitions take per_rep_s on the fake clock (its first call warmup_s more;
    timed block number i, counted from 0, slow_blocks[i] times longer)."""
    calls = []

    def run(k: int) -> None:
        calls.append(k)
        clock = workload.now
        clock.t += setup_s
        factor = (slow_blocks or {}).get(len(calls) - 5, 1.0)  # the warm-up and sizing runs come first
        clock.t += k * per_rep_s * factor + (warmup_s if len(calls) == 1 else 0.0)

    return workload.Contender(name, run), calls


@pytest.mark.parametrize("per_rep_s", [20e-6, 1e-3, 8e-3])
def test_a_longer_budget_buys_more_blocks_of_the_same_length(workload, per_rep_s):
    short, _ = steady(workload, "short", per_rep_s)
    timed(workload, [short], 0.3)
    workload.now.t = 0.0
    long, _ = steady(workload, "long", per_rep_s)
    timed(workload, [long], 1.2)
    assert short.info["reps_per_block"] == long.info["reps_per_block"]
    block = short.info["reps_per_block"] * per_rep_s
    assert workload.BLOCK_S * 0.5 <= block <= workload.BLOCK_S * 1.5
    assert len(long.info["block_s"]) >= 3.5 * len(short.info["block_s"]) >= 3.5 * workload.MIN_BLOCKS


def test_a_repetition_longer_than_a_block_is_a_block_of_one(workload):
    slow, _ = steady(workload, "slow", 0.06)
    timed(workload, [slow], 1.0)
    assert slow.info["reps_per_block"] == 1 and len(slow.info["block_s"]) >= workload.MIN_BLOCKS


def test_the_budget_ends_the_blocks_and_the_cap_ends_them_on_a_fast_machine(workload):
    contenders = [steady(workload, name, 1e-3)[0] for name in ("a", "b")]
    timed(workload, contenders, 2.0)
    round_s = 2 * contenders[0].info["reps_per_block"] * 1e-3
    assert 2.0 - round_s <= workload.now.t <= 2.0  # no round that would end past the budget was started
    assert [len(c.info["block_s"]) for c in contenders][0] == len(contenders[1].info["block_s"])  # interleaved
    workload.now.t = 0.0
    capped = steady(workload, "capped", 1e-3)[0]
    timed(workload, [capped], 1000.0)
    assert len(capped.info["block_s"]) == workload.MAX_BLOCKS  # in all windows together


def test_a_squeezed_budget_shrinks_the_blocks_to_keep_three_of_each(workload):
    # a 1 s warm-up (tracing a graph) leaves 0.2 s of a 1.2 s budget for four contenders
    contenders = [steady(workload, name, 1e-4, warmup_s=1.0 if name == "a" else 0.0)[0] for name in "abcd"]
    timed(workload, contenders, 1.2)
    for contender in contenders:
        assert len(contender.info["block_s"]) >= workload.MIN_BLOCKS
        assert contender.info["reps_per_block"] * 1e-4 < workload.BLOCK_S / 2
    assert workload.now.t <= 1.2 + 0.05


def test_untimed_set_up_does_not_shorten_the_timed_block(workload):
    # a fed step's settling steps run before each block, off the clock of the figure
    class Settled(workload.Contender):
        def timed(self, k):
            self.run(k)
            return k * 2e-3

    def run(k: int) -> None:
        workload.now.t += 0.01 + k * 2e-3

    fed = Settled("fed", run)
    timed(workload, [fed], 2.0)
    assert fed.info["reps_per_block"] * 2e-3 == pytest.approx(workload.BLOCK_S, rel=0.1)


def test_the_figure_is_the_best_block_and_the_spread_ignores_one_interruption(workload):
    contender, _ = steady(workload, "c", 1e-3, slow_blocks={2: 10.0})
    timed(workload, [contender], 1.0)
    info = contender.summary()
    assert info["best_s"] == pytest.approx(1e-3)
    assert max(info["block_s"]) == pytest.approx(1e-2)  # the interrupted block is kept in the record
    assert info["median_s"] == pytest.approx(1e-3) and info["spread"] == 0


@pytest.mark.parametrize("values", [[3.0], [1.0, 2.0], [5.0, 1.0, 3.0], [1.0, 2.0, 4.0, 8.0, 16.0, 3.0, 2.5]])
def test_quartiles_are_the_inclusive_method(workload, values):
    low, middle, high = workload.quartiles(values)
    expected = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    assert (low, middle, high) == pytest.approx(tuple(expected))


def test_a_contender_that_raises_is_dropped_and_the_others_go_on(workload):
    good, _ = steady(workload, "good", 1e-3)

    def broken(k: int) -> None:
        raise RuntimeError("no kernel")

    bad = workload.Contender("bad", broken)
    timed(workload, [bad, good], 1.0)
    assert bad.info["error"]["type"] == "RuntimeError" and not bad.info["block_s"]
    assert len(good.info["block_s"]) >= workload.MIN_BLOCKS



def test_the_blocks_come_in_windows_with_the_other_sections_between_and_their_time_not_counted(workload):
    contender, calls = steady(workload, "c", 1e-3)
    yields = timed(workload, [contender], 1.0, gap_s=5.0)
    assert yields == workload.PASSES - 1
    own = workload.now.t - 5.0 * yields
    assert 0.9 <= own <= 1.0  # the budget spent on this section alone, not on the gaps
    assert len(contender.info["block_s"]) >= 2 * workload.MIN_BLOCKS  # the later windows got their share too


def test_a_slow_spell_over_the_first_window_does_not_make_the_figure(workload):
    # a machine running 1.5x slower through the first window (a shared VM's speed state): the second
    # window, seconds later, gives the figure
    slow_until = [None]

    def run(k: int) -> None:
        clock = workload.now
        clock.t += k * 1e-3 * (1.5 if slow_until[0] is None or clock.t < slow_until[0] else 1.0)

    contender = workload.Contender("c", run)
    windows = workload.in_passes([contender], 1.0, deadline=1e9)
    next(windows)  # the first window, all of it slow
    slow_until[0] = workload.now.t
    workload.now.t += 5.0
    for _ in windows:
        pass
    assert contender.summary()["best_s"] == pytest.approx(1e-3)
    assert max(contender.info["block_s"]) == pytest.approx(1.5e-3)
