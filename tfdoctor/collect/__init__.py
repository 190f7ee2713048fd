"""Collectors: the only code that does I/O. They gather facts once, concurrently, into one dict.

The TensorFlow child starts first (it is the slow one: one `import tensorflow`); every other fact is
gathered on worker threads while it imports. A collector that fails records its error and leaves its
sections unrecorded, so the checks that need them skip with "not recorded" instead of guessing.
"""

from __future__ import annotations

import importlib
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable

from tfdoctor.collect.options import CollectOptions
from tfdoctor.collect.target import TargetUnusableError
from tfdoctor.facts import SECTIONS
from tfdoctor.processes.commands import CHILDREN, owned_by
from tfdoctor.processes.deadline import carried

__all__ = ["CollectOptions", "TargetUnusableError", "gather", "chosen_collectors", "COLLECTORS"]


@dataclass(frozen=True)
class Collector:
    name: str
    target: str  # "module:function", imported only when the collector runs
    sections: tuple[str, ...]
    always: bool = False  # cheap facts every report carries (platform, interpreter)

    def load(self) -> Callable[[CollectOptions], dict[str, Any]]:
        module_name, _, function = self.target.partition(":")
        return getattr(importlib.import_module(module_name), function)


# Slowest first: the pool starts them in this order.
COLLECTORS = (
    Collector("tensorflow", "tfdoctor.collect.tensorflow:collect_tensorflow", ("tensorflow",)),
    Collector("target", "tfdoctor.collect.target:collect_target", ("python", "distributions"), always=True),
    Collector("integrity", "tfdoctor.collect.integrity:collect_integrity", ("integrity", "installers"), always=True),
    Collector("nvidia", "tfdoctor.collect.nvidia:collect_nvidia", ("nvidia",)),
    Collector("displays", "tfdoctor.collect.macos:collect_displays", ("system_profiler",)),
    Collector("sysctl", "tfdoctor.collect.macos:collect_sysctl", ("sysctl",), always=True),
    Collector("host", "tfdoctor.collect.system:collect_host", ("host",), always=True),
    Collector("os", "tfdoctor.collect.system:collect_os", ("os",), always=True),
    Collector("cpu", "tfdoctor.collect.system:collect_cpu", ("cpu",), always=True),
    Collector("memory", "tfdoctor.collect.system:collect_memory", ("memory",)),
    Collector("environment", "tfdoctor.collect.system:collect_environment", ("environment",), always=True),
)


def chosen_collectors(sections: frozenset[str] | set[str]) -> list[Collector]:
    """The collectors a run gathers with: those recording a section the selected checks declare
    (diagnosis/doctor.needed_sections), and the cheap ones every report carries."""
    return [c for c in COLLECTORS if c.always or set(c.sections) & sections]


def _merged(chosen: list[Collector], collected: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The sections collected so far, in the collectors' order (not the order they finished in)."""
    facts: dict[str, Any] = {}
    for collector in chosen:
        facts.update(collected.get(collector.name) or {})
    return facts


def _timed(collector: Collector, options: CollectOptions) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    sections = collector.load()(options)
    return sections, (time.perf_counter() - started) * 1000


def gather(options: CollectOptions, alongside: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run every collector whose sections the selected checks need (plus the cheap always-on ones).

    `alongside` (the doctor's own preparation, e.g. parsing the checks' tables) runs on the pool too,
    submitted after every collector, so its Python work never delays a child's start; it is done when
    this returns.

    An interrupt (KeyboardInterrupt, or the CLI's SIGTERM exception) while waiting kills every child
    the collectors started, so their threads end at once, and leaves without waiting for them. An
    unusable target kills the children of this gathering only: another may run beside it (tfdoctor scan)."""
    chosen = chosen_collectors(options.sections)
    collected: dict[str, dict[str, Any]] = {}
    durations: dict[str, float] = {}
    errors: dict[str, str] = {}
    CHILDREN.reopen()
    owner = object()  # this gathering's children, apart from any other's in this process
    pool = ThreadPoolExecutor(max_workers=len(chosen) + 1, thread_name_prefix="collect")
    try:
        # each worker runs in a copy of this thread's context: the run's deadline holds there too
        futures = {pool.submit(carried(owned_by), owner, _timed, c, options): c for c in chosen}
        if alongside is not None:
            pool.submit(alongside)
        for future in as_completed(futures):
            collector = futures[future]
            try:
                sections, elapsed = future.result()
            except TargetUnusableError:
                raise
            except Exception as exc:  # noqa: BLE001 - one broken collector must not sink the report
                errors[collector.name] = f"{type(exc).__name__}: {exc}"
            else:
                collected[collector.name] = sections
                durations[collector.name] = round(elapsed, 3)
            if options.progress is not None:
                pending = [c.name for c in chosen if c.name not in collected and c.name not in errors]
                options.progress("collected", {"collector": collector.name, "pending": pending,
                                               "facts": _merged(chosen, collected)})
    except TargetUnusableError:
        CHILDREN.kill_owned(owner)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    except BaseException:
        CHILDREN.kill_all()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    CHILDREN.release(owner)
    facts = _merged(chosen, collected)
    ordered = {name: facts[name] for name in SECTIONS if name in facts}
    ordered.update((name, value) for name, value in facts.items() if name not in ordered)
    ordered["collection"] = {"durations_ms": durations, "errors": errors}
    return ordered
