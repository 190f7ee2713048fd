"""Doctor runs that mostly wait (a timeout running out, a fake device's sleeps), started when their module
starts and read by their own tests at its end: the module's other tests use the CPU meanwhile instead of
after. Each test still asserts everything on its own run; only the moment the run starts moves."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")
RESULT_TIMEOUT_S = 300  # a run stuck this long fails its test instead of hanging the suite


@contextmanager
def started(**runs: Callable[[], T]) -> Iterator[dict[str, Future]]:
    """Each run in a thread of its own from now on; leaving the block waits for them all."""
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        yield {name: pool.submit(run) for name, run in runs.items()}
