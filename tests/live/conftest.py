"""Print what the live suite built, saw and cost at the end of the run (the note the issue asks for)."""

from __future__ import annotations

import os
import time

import pytest

from tests.live import support


def _case_lines(case: str, seen: dict) -> list[str]:
    lines = [f"{case}: {seen.get('mechanism', '')}"]
    if "before" in seen:
        lines.append(f"    expected {seen.get('expect')}; doctor: {seen['before']}  "
                     f"({seen.get('build_seconds', 0):.0f} s, {seen.get('build_download', 0) / 1e6:.0f} MB fetched)")
    else:
        lines.append(f"    expected {seen.get('expect')}")
    if "experiment_seconds" in seen:
        lines.append(f"    experiments: {seen.get('experiment_trials')} trials, {seen['experiment_seconds'] or 0:.1f} s "
                     f"(the whole run {seen.get('doctor_seconds')} s)")
    if "pasted_works" in seen:
        ran = "; ".join(f"[{code}] {command}" for command, code in seen.get("ran", ())) or "no commands"
        lines.append(f"    plan pasted: {ran}")
        lines.append(f"      then: {'tensorflow + tf.keras work' if seen['pasted_works'] else 'STILL BROKEN'}; "
                     f"doctor: {seen.get('pasted_after')}  ({seen.get('pasted_seconds', 0):.0f} s, "
                     f"{seen.get('pasted_download', 0) / 1e6:.0f} MB fetched)")
    if "fix_exit" in seen:
        line = f"    tfdoctor fix --yes: exit {seen['fix_exit']}"
        if "fix_works" in seen:
            line += f"; {'tensorflow + tf.keras work' if seen['fix_works'] else 'STILL BROKEN'}; doctor: {seen.get('fix_after')}"
        if "undo_exit" in seen:
            line += (f"; --undo: exit {seen['undo_exit']}, freeze {'restored' if seen.get('undo_restores') else 'DIFFERS'}"
                     f"  ({seen.get('fix_seconds', 0):.0f} s)")
        if "fix_changes" in seen:
            line += f"; freeze {'unchanged' if not seen['fix_changes'] else 'CHANGED: ' + ', '.join(seen['fix_changes'])}"
        if "unchanged" in seen:
            line += f"; {seen.get('files', 0)} recorded files {'byte for byte unchanged' if seen['unchanged'] else 'CHANGED'}"
        lines.append(line)
    return lines


def ledger_lines(ledger: support.Ledger) -> list[str]:
    lines = [line for case, seen in ledger.cases.items() for line in _case_lines(case, seen)]
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # under xdist each worker running live modules has a ledger
    lines.append(
        f"live suite{' on ' + worker if worker else ''}: {(ledger.finished or time.monotonic()) - ledger.started:.0f} s (base environment {ledger.base_seconds:.0f} s); "
        f"wheelhouse (base and case wheels) {ledger.wheelhouse_bytes / 1e6:.0f} MB; pip network downloads "
        f"{ledger.download_bytes / 1e6:.0f} MB (pip's own 'Downloading' lines: the suite's builds and pasted plans; "
        "uv and tfdoctor fix print none)")
    return lines


@pytest.fixture(autouse=True)
def _clock():
    """The suite's time ends with its last live test, not with the session (other tests may run after it)."""
    yield
    support.LEDGER.finished = time.monotonic()


def pytest_sessionfinish(session):
    """In an xdist worker, hand the ledger to the controller, which prints it (conftest.py at the root)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None and support.LEDGER.cases:
        workeroutput["live_ledger_lines"] = ledger_lines(support.LEDGER)


def pytest_terminal_summary(terminalreporter):
    if not support.LEDGER.cases:
        return  # nothing ran here (or, under xdist, the worker's ledger reaches the controller instead)
    terminalreporter.section("live environments")
    for line in ledger_lines(support.LEDGER):
        terminalreporter.write_line(line)
