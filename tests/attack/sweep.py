"""Every pattern that can read a report's text, on adversarial strings: run as a child process
(`python -m tests.attack.sweep SIZE [GROUP]`) so that a pattern gone quadratic can be stopped from outside.

It prints `start NAME` before and `done NAME SECONDS RATIO` after each pattern, flushing each line;
the test reading it fails on a pattern whose time grows faster than its input or runs past its bound,
or on the one it was inside when the sweep ran out of time. The patterns: the redaction and rendering functions that bench/bench_hostile.py
times, every module-level compiled pattern of tfdoctor and its checks, and every pattern of the
knowledge tables (signatures, log noise, ...). Besides bench_hostile's strings, each regex also gets
its own leading literal repeated ('Ignoring visible gpu device Ignoring visible ...'), the input that
makes a `.*` after a literal backtrack once per repetition.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import runpy
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[2]
BENCH = runpy.run_path(str(ROOT / "bench" / "bench_hostile.py"), run_name="bench_hostile")


# Patterns never searched through a text, only tried where a linear function chose (their function is swept).
ANCHORED_ONLY = {
    "tfdoctor.report.redact._JWT": "matched only at a start _jwt_spans found; a failure skips the whole first part",
}


def _module_patterns() -> Iterator[tuple[str, re.Pattern]]:
    import tfdoctor
    import tfdoctor.checks as checks

    for package in (tfdoctor, checks):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if ".child" in info.name or info.name.endswith("__main__"):
                continue  # the child scripts run in the target interpreter, on its own output
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                values = value if isinstance(value, (tuple, list)) else (value,)
                for index, item in enumerate(values):
                    if isinstance(item, re.Pattern) and f"{info.name}.{name}" not in ANCHORED_ONLY:
                        yield f"{info.name}.{name}" + (f"[{index}]" if len(values) > 1 else ""), item


def _knowledge_patterns() -> Iterator[tuple[str, re.Pattern]]:
    from tfdoctor import knowledge
    from tfdoctor.facts import signatures

    def walk(value: Any, where: str) -> Iterator[tuple[str, str]]:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("pattern", "patterns"):
                    for index, text in enumerate([item] if isinstance(item, str) else item):
                        yield f"{where}.{key}[{index}]", text
                else:
                    yield from walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from walk(item, f"{where}[{index}]")

    for table in knowledge.names():
        for where, text in walk(knowledge.load(table), table):
            yield f"knowledge {where}", re.compile(text)
    yield "signatures.notable_pattern", signatures.notable_pattern()


def leading_literals(pattern: re.Pattern) -> list[str]:
    """The literal text each top-level branch of `pattern` starts with ('' when it starts otherwise)."""
    from re import _parser as parser  # the parse tree names what the pattern starts with

    def literal(items: Any) -> str:
        text = ""
        for op, value in items:
            if op is parser.LITERAL:
                text += chr(value)
            elif op is parser.IN and value and value[0][0] is parser.LITERAL:  # [Ss]ymbol: 'Symbol'
                text += chr(value[0][1])
            elif op is parser.SUBPATTERN:
                return text + literal(value[-1])
            else:
                break
        return text

    pattern_text = pattern.pattern if isinstance(pattern.pattern, str) else pattern.pattern.decode("utf-8", "replace")
    tree = list(parser.parse(pattern_text, pattern.flags & ~re.UNICODE if isinstance(pattern.pattern, bytes) else 0))
    if len(tree) == 1 and tree[0][0] is parser.BRANCH:
        return [literal(list(branch)) for branch in tree[0][1][1]]
    return [literal(tree)]


def _runner(pattern: re.Pattern) -> Callable[[str], Any]:
    if isinstance(pattern.pattern, bytes):
        return lambda text: pattern.findall(text.encode("utf-8", "replace"))
    return pattern.findall


def units() -> list[tuple[str, Callable[[str], Any], list[str]]]:
    """(name, function of a string, extra units for it) for every pattern the sweep covers."""
    found: list[tuple[str, Callable[[str], Any], list[str]]] = [
        (name, run, []) for name, run in BENCH["patterns"]().items()]
    seen: set[tuple[Any, int]] = set()
    for name, pattern in [*_module_patterns(), *_knowledge_patterns()]:
        if (pattern.pattern, pattern.flags) in seen:
            continue
        seen.add((pattern.pattern, pattern.flags))
        extra = [literal + tail for literal in leading_literals(pattern) if literal for tail in ("", " ", "1.")]
        found.append((name, _runner(pattern), extra))
    return found


def _seconds(run: Callable[[str], Any], texts: list[str]) -> float:
    """CPU seconds of this process: other processes on a shared machine (or a parallel test worker)
    do not inflate them, as they do wall time; a quadratic pattern still costs 16x the CPU for 4x the text."""
    started = time.process_time()
    for text in texts:
        run(text)
    return time.process_time() - started


def _texts(size: int, common: dict[str, str], extra: list[str]) -> list[str]:
    return [*(text[:size] for text in common.values()), *((unit * (size // len(unit) + 1))[:size] for unit in extra)]


def main(size: int, group: str = "") -> None:
    """For each pattern: `done NAME SECONDS RATIO`, the seconds on strings of `size` characters and how
    many times longer than on strings four times shorter (linear: about 4; quadratic: about 16)."""
    common = BENCH["adversarial_strings"](size)
    for name, run, extra in units():
        if group and group not in name:
            continue
        print(f"start {name}", flush=True)
        small = min(_seconds(run, _texts(size // 4, common, extra)) for _ in range(3))
        big = _seconds(run, _texts(size, common, extra))
        if big > 16 * max(small, 0.002):  # the machine may have paused once: measure again before telling
            big = min(big, _seconds(run, _texts(size, common, extra)))
        print(f"done {name} {big:.4f} {big / max(small, 0.002):.1f}", flush=True)
    print("finished", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "")
