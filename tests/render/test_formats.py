"""Output formats as a registry (issue 36 item 4): each format is one module declaring which commands it serves,
and every command's --format choices are built from that, so scan and diff refuse a format that cannot render
them (a new format used to print text under `scan`, and `diff` raised KeyError)."""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import pytest

from tests.cli_support import run_cli
from tfdoctor.render import formats
from tfdoctor.render.formats import COMMANDS, REGISTERED, Look, OutputFormat, output_format, registry, serving

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "linux" / "tensorflow-2.21-legacy-keras-without-tf-keras.json"


def test_each_registered_module_declares_one_format_under_its_own_name():
    names = [importlib.import_module(f"tfdoctor.render.{module}").FORMAT.name for module in REGISTERED]
    assert len(set(names)) == len(names) == len(registry())
    assert list(registry()) == names
    assert all(output_format(name).serves("report") for name in names)  # every format renders a report


def _format_choices(*command: str) -> list[str]:
    from tfdoctor.cli.entry import _click_command

    group = _click_command()
    found = group.commands[command[0]] if command else group
    option = next(p for p in found.params if "--format" in getattr(p, "opts", ()))
    return [choice.value for choice in option.type_descriptor.annotation]  # typer's choices: an Enum


@pytest.mark.parametrize("command, kind", [((), "report"), (("explain",), "report"), (("diff",), "diff"),
                                           (("scan",), "scan")])
def test_every_commands_format_choices_are_the_formats_that_serve_it(command, kind):
    assert _format_choices(*command) == list(serving(kind))


@pytest.mark.parametrize("command", [["scan"], ["diff", str(FIXTURE), str(FIXTURE)]])
def test_a_format_that_cannot_render_a_command_is_refused_by_the_parser(command, tmp_path):
    assert not output_format("openmetrics").serves(command[0])
    code, out, err = run_cli([*command, "--format", "openmetrics", *(["--depth", "0", str(tmp_path)]
                                                                    if command[0] == "scan" else [])])
    assert code == 2 and out == ""
    assert "'openmetrics' is not one of" in err


def _report():
    code, out, _ = run_cli(["explain", "--json", FIXTURE])
    return json.loads(out)


def test_each_format_renders_each_command_it_serves():
    document = _report()
    code, diff_out, _ = run_cli(["diff", "--json", FIXTURE, FIXTURE])
    compared = json.loads(diff_out)
    rows = [{"environment": "/venv", "python_version": "3.11.7", "tensorflow": "2.21.0", "gpus": 0, "verdict": "fail",
             "exit_code": 1, "first_problem": {"id": "keras", "summary": "tf.keras needs tf-keras"}}]
    for name, declared in registry().items():
        for command, subject in (("report", document), ("diff", compared), ("scan", rows)):
            if declared.serves(command):
                text = getattr(declared, command)(subject, Look())
                assert isinstance(text, str) and text.strip(), (name, command)


def test_a_new_format_is_one_module_and_its_name_in_the_tuple(monkeypatch):
    """The newcomer's task: a CSV format of the checks. One module defining FORMAT; nothing else changes."""
    module = types.ModuleType("tfdoctor.render.checks_csv")

    def report(document, look):
        return "".join(f"{r['id']},{r['status']}\n" for r in document["results"])

    module.FORMAT = OutputFormat("csv", "The checks as CSV.", report=report)
    monkeypatch.setitem(sys.modules, "tfdoctor.render.checks_csv", module)
    monkeypatch.setattr(formats, "REGISTERED", (*REGISTERED, "checks_csv"))
    formats.registry.cache_clear()
    try:
        assert serving("report")[-1] == "csv" and "csv" not in serving("scan") + serving("diff")
        from tfdoctor.cli.emit import emit

        document, written = _report(), []
        monkeypatch.setattr("tfdoctor.cli.emit.write", lambda text, output: written.append(text))
        emit(document, output_format("csv"), False, None)
        assert written[0].splitlines()[0].count(",") == 1 and "keras," in written[0]
    finally:
        formats.registry.cache_clear()


def test_commands_are_the_three_kinds_of_output():
    assert COMMANDS == ("report", "diff", "scan")
    with pytest.raises(ValueError):
        serving("explain")
