"""CollectOptions.environ: the variables the collectors record and their children run with, given without
touching this process's environment (what `tfdoctor fix` proves a plan under: the user's shell once the
plan's `export` steps are done)."""

from __future__ import annotations

import os
import sys

from tfdoctor.collect.options import CollectOptions
from tfdoctor.collect.system import collect_environment
from tfdoctor.collect.target import collect_target


def test_the_environment_section_records_the_given_variables_not_this_process(monkeypatch):
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    given = {"TF_USE_LEGACY_KERAS": "1", "PATH": os.environ.get("PATH", "")}
    assert collect_environment(CollectOptions(environ=given))["environment"].get("TF_USE_LEGACY_KERAS") == "1"
    assert "TF_USE_LEGACY_KERAS" not in collect_environment(CollectOptions())["environment"]
    assert "TF_USE_LEGACY_KERAS" not in os.environ


def test_the_target_child_runs_under_the_given_variables(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    extra = tmp_path / "on-the-path"
    extra.mkdir()
    given = {**os.environ, "PYTHONPATH": str(extra)}
    described = collect_target(CollectOptions(python=sys.executable, environ=given))
    assert str(extra) in described["python"]["sys_path"]
    assert str(extra) not in collect_target(CollectOptions(python=sys.executable))["python"]["sys_path"]
