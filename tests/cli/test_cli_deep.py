"""--deep reaches the collectors (H8's workload probe reads CollectOptions.deep)."""

from __future__ import annotations

import tfdoctor.collect as collect
from tfdoctor.cli.entry import run_command_line


def _seen_options(monkeypatch, args):
    seen = []

    def fake_gather(options, alongside=None):
        seen.append(options)
        return {}

    monkeypatch.setattr(collect, "gather", fake_gather)
    run_command_line(["--format", "json", "--only", "memory", *args])
    return seen[0]


def test_deep_flag_reaches_collect_options(monkeypatch, capsys):
    assert _seen_options(monkeypatch, ["--deep"]).deep is True


def test_without_deep_the_workload_probe_stays_off(monkeypatch, capsys):
    assert _seen_options(monkeypatch, []).deep is False
