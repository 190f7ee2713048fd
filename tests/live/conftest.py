"""Print what the live suite built, saw and cost at the end of the run (the note the issue asks for)."""

from __future__ import annotations

import time

from tests.live import support


def pytest_terminal_summary(terminalreporter):
    ledger = support.LEDGER
    if not ledger.cases:
        return
    write = terminalreporter.write_line
    terminalreporter.section("live environments")
    for case, seen in ledger.cases.items():
        write(f"{case}: {seen.get('mechanism', '')}")
        write(f"    expected {seen.get('expect')}; doctor: {seen.get('before')}  ({seen.get('build_seconds', 0):.0f} s, {seen.get('build_download', 0) / 1e6:.0f} MB fetched)")
        if "works" in seen:
            ran = "; ".join(f"[{code}] {command}" for command, code in seen.get("ran", ())) or "no commands"
            write(f"    fix: {ran}")
            write(f"    then: {'tensorflow + tf.keras work' if seen['works'] else 'STILL BROKEN'}; doctor: {seen.get('after')}"
                  f"  ({seen.get('fix_seconds', 0):.0f} s, {seen.get('fix_download', 0) / 1e6:.0f} MB fetched)")
    write(f"live suite: {(ledger.finished or time.monotonic()) - ledger.started:.0f} s (base environment {ledger.base_seconds:.0f} s); "
          f"wheelhouse (base and case wheels) {ledger.wheelhouse_bytes / 1e6:.0f} MB; pip network downloads {ledger.download_bytes / 1e6:.0f} MB")
