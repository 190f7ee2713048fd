"""Issue 36, item 7: nothing quadratic in the number of installed distributions. 5,000 distributions that require
each other in a ring (bench/bench_distributions.py) took minutes: each check asked about every installed
distribution, and each question (its first copy, the installed TensorFlow, the installed versions) scanned every
recorded one. Not a timing test: it counts how often the checks and the planner read a distribution's entry, which
must grow with the number of distributions, not with its square."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from tfdoctor.checking.registry import all_checks
from tfdoctor.checking.runner import run_check
from tfdoctor.plan.planner import build_plan

from tests.builders import ENV_SITE, tensorflow_environment


class CountedEntry(Mapping[str, Any]):
    """A distribution's entry that counts every read of it (one shared tally per run)."""

    def __init__(self, data: Mapping[str, Any], reads: list[int]) -> None:
        self._data = dict(data)
        self._reads = reads

    def __getitem__(self, key: str) -> Any:
        self._reads[0] += 1
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        self._reads[0] += 1
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _ring(count: int, reads: list[int]) -> dict:
    """tensorflow-cpu beside `count` distributions that require the next three at versions none has (every pin
    unmet), one in ten requiring TensorFlow too, as the bench builds them."""
    extra = []
    for index in range(count):
        requires = [f"ring-{(index + step) % count}>={step + 5}.0" for step in (1, 2, 3)]
        if index % 10 == 0:
            requires.append("tensorflow-cpu<2.22,>=2.20")
        extra.append({"name": f"ring-{index}", "version": f"{index % 3}.0", "location": ENV_SITE,
                      "top_level": [f"ring_{index}"], "requires": requires, "has_record": True})
    facts = tensorflow_environment(extra=extra)
    facts["distributions"] = [CountedEntry(entry, reads) for entry in facts["distributions"]]
    return facts


def _reads(count: int) -> int:
    """Reads of the distributions' entries by every check and the plan of their results, on a ring of `count`."""
    reads = [0]
    facts = _ring(count, reads)
    results = [run_check(check, facts) for check in all_checks()]
    assert any(result.status.value == "fail" for result in results)  # the unmet pins are judged, not skipped
    build_plan(results, facts)
    return reads[0]


def test_the_entries_are_read_a_number_of_times_linear_in_the_distributions():
    small, large = _reads(30), _reads(120)
    # four times the distributions: about four times the reads when linear, sixteen when quadratic
    assert large < 6 * small, (small, large)
