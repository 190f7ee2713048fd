"""--no-experiments and --experiments-timeout reach the doctor, as the API's parameters do; the stderr
progress line is drawn only for a terminal and never on stdout (issue 29)."""

from __future__ import annotations

import io

import tfdoctor.diagnosis.doctor as doctor
from tfdoctor.cli.entry import run_command_line
from tfdoctor.render.live import ExperimentLine
from tfdoctor.report.run import RunReport


def _seen_options(monkeypatch, run):
    seen = []

    def fake_diagnose(options):
        seen.append(options)
        return RunReport(facts={}, results=[])

    monkeypatch.setattr(doctor, "diagnose", fake_diagnose)
    run()
    return seen[0]


def test_the_options_reach_the_doctor(monkeypatch, capsys):
    options = _seen_options(monkeypatch, lambda: run_command_line(
        ["--format", "json", "--only", "memory", "--no-experiments", "--experiments-timeout", "12"]))
    assert options.experiments is False and options.experiments_timeout == 12.0
    default = _seen_options(monkeypatch, lambda: run_command_line(["--format", "json", "--only", "memory"]))
    assert default.experiments is True and default.experiments_timeout == 30.0
    assert capsys.readouterr().err == ""  # not a terminal: no progress line


def test_the_api_takes_the_same_parameters(monkeypatch):
    import tfdoctor

    options = _seen_options(monkeypatch, lambda: tfdoctor.diagnose(only=["memory"], experiments=False,
                                                                   experiments_timeout=5.0, config={}))
    assert options.experiments is False and options.experiments_timeout == 5.0


def test_the_stderr_line_shows_the_trial_and_is_cleared():
    stream = io.StringIO()
    line = ExperimentLine(stream)
    line("collected", {"facts": {}})
    assert stream.getvalue() == ""
    line("experiment", {"index": 2, "goal": "import", "trial": "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION unset"})
    assert "experiment 2: import with PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION unset" in stream.getvalue()
    line("experiment", {"done": True})
    assert stream.getvalue().endswith("\r\x1b[2K")
