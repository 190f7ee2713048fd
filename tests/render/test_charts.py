"""The matmul pictures: the terminal's bar chart under the probe and workload lines, and Markdown's Mermaid
xychart with its table, drawn from the facts of a --deep report (the shapes tfdoctor/child/workload.py
and the probe record, built with tests/workload_support.py and tests/builders.py), through `tfdoctor explain` as a
support engineer runs it. The Mermaid blocks are parsed by the real Mermaid library (tests/mermaid_support.py)."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys

import pytest

from tests import mermaid_support
from tests.integration_support import MARKS
from tests.builders import probe_side
from tests.cli_support import run_cli, write
from tests.shared_run_support import DEEP_RUN, shared_doctor_run
from tests.workload_support import ladder, workload_facts
from tfdoctor.operations.explain import explained_document as explain
from tfdoctor.report.saved import parse_report
from tfdoctor.render.charts import BAR_WIDTH, mermaid_xychart, crossover_chart
from tfdoctor.render.markdown import render as markdown
from tfdoctor.render.text import render as text

CPU_CURVE = {64: 27.3, 128: 121.4, 256: 215.8, 512: 416.6, 1024: 451.9, 2048: 481.0}  # a real --deep run here
GPU_LADDER = ({64: 10.0, 256: 60.0, 512: 150.0, 2048: 240.0}, {64: 1.0, 256: 40.0, 512: 600.0, 2048: 4000.0})
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def deep_report(gpu: bool = False, probe_sides: dict | None = None) -> dict:
    crossover = ladder(*GPU_LADDER) if gpu else ladder(CPU_CURVE)
    facts = workload_facts(gpu=gpu, crossover=crossover)
    if probe_sides is not None:
        facts["tensorflow"]["probe"] = {"status": "ok", "dtype": "float32", "sides": probe_sides}
    return {"schema_version": "1.0", "facts": facts}


def explained(report: dict, only: tuple[str, ...] = ("probe", "workload")) -> dict:
    return explain(parse_report(json.dumps(report).encode(), "<test>"), only, ())


def chart_rows(output: str) -> list[tuple[str, str, int, str]]:
    """(size, device, bar length in cells, figure) of every bar row in a text report."""
    rows, size = [], ""
    for line in output.splitlines():
        match = re.match(r"^\s+(\d*)\s+(GPU|CPU) ([█▉▊▋▌▍▎▏ ]+?) +([\d.?]+)(?: .*)?$", line)
        if match:
            size = match.group(1) or size
            bar = match.group(3).rstrip()
            rows.append((size, match.group(2), len(bar), match.group(4)))
    return rows


def test_the_terminal_shows_the_crossover_as_bars_under_the_workload_line():
    output = text(explained(deep_report()), color=False)
    lines = output.splitlines()
    workload_line = next(i for i, line in enumerate(lines) if "workload" in line and "workloads measured" in line)
    title = next(i for i, line in enumerate(lines) if "matmul GFLOPS by matrix size N" in line)
    assert title > workload_line
    rows = chart_rows(output)
    assert [(size, device, figure) for size, device, _, figure in rows] == [
        (str(n), "CPU", f"{g:.0f}") for n, g in CPU_CURVE.items()]
    lengths = [length for _, _, length, _ in rows]
    assert lengths == sorted(lengths) and lengths[-1] == BAR_WIDTH[1]  # the largest figure fills the bar
    assert lengths[0] == round(27.3 / 481.0 * BAR_WIDTH[1])  # linear: the bars are the GFLOPS


def test_gpu_rows_carry_their_speed_against_the_cpu():
    output = text(explained(deep_report(gpu=True)), color=False)
    rows = chart_rows(output)
    assert [(size, device) for size, device, _, _ in rows] == [
        (s, d) for s in ("64", "256", "512", "2048") for d in ("GPU", "CPU")]
    assert re.search(r"^\s+64 GPU .* 1\.0 0\.10x CPU$", output, re.M)
    assert re.search(r"^\s+2048 GPU .* 4000 16\.67x CPU$", output, re.M)
    # 1 GFLOPS against 4000 is too short for a block, but not nothing
    assert rows[0][2] == 1 and rows[-2][2] == BAR_WIDTH[1]


def test_the_chart_reads_the_same_without_colour_and_fits_the_width():
    document = explained(deep_report(gpu=True))
    coloured = text(document, color=True, width=72)
    plain = text(document, color=False, width=72)
    assert "\x1b[" in coloured and "\x1b[" not in plain
    assert [line.rstrip() for line in ANSI.sub("", coloured).splitlines()] == plain.splitlines()  # colour adds nothing
    chart = plain[plain.index("matmul GFLOPS by matrix size"):plain.index("warnings:") if "warnings:" in plain else None]
    assert all(len(line) <= 72 for line in chart.splitlines())
    wide = text(document, color=False, width=200)
    assert max(length for _, _, length, _ in chart_rows(wide)) == BAR_WIDTH[1]  # compact on a wide terminal
    narrow = max(length for _, _, length, _ in chart_rows(plain))
    assert BAR_WIDTH[0] <= narrow < BAR_WIDTH[1]


def test_the_probe_chart_compares_a_gpu_with_the_cpu_and_is_left_out_for_one_device():
    sides = {"gpu": probe_side("GPU", 4100.0, n=4096), "cpu": probe_side("CPU", 238.0, n=2048)}
    output = text(explained(deep_report(probe_sides=sides), only=("probe",)), color=False)
    assert "the probe's size for each device" in output
    assert [(s, d, f) for s, d, _, f in chart_rows(output)] == [("4096", "GPU", "4100"), ("2048", "CPU", "238")]
    alone = text(explained(deep_report(probe_sides={"cpu": sides["cpu"]}), only=("probe",)), color=False)
    assert chart_rows(alone) == [] and "GFLOPS" in alone  # the summary says the one figure


def test_no_chart_without_deep_figures_or_for_a_skipped_check():
    report = deep_report()
    del report["facts"]["tensorflow"]["workload"]
    output = text(explained(report), color=False)
    assert chart_rows(output) == [] and "matmul GFLOPS by matrix size" not in output
    assert "mermaid" not in markdown(explained(report))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -5.0, 1e308, "480", True, None, {"x": 1}])
def test_a_hostile_figure_is_a_question_mark_not_a_crash(bad):
    document = explained(deep_report(gpu=True))
    document["facts"]["tensorflow"]["workload"]["crossover"]["sizes"][1]["gpu"]["gflops"] = bad
    assert ("256", "GPU", 0, "?") in chart_rows(text(document, color=False))
    # Mermaid pairs the n-th value with the n-th size: a size without every figure is left out of it
    block = mermaid_xychart(crossover_chart(document["facts"]))
    assert '["64", "512", "2048"]' in block and "nan" not in block.lower() and "inf" not in block.lower()
    assert "| 256 | ? | 60 | – |" in markdown(document)


def test_markdown_holds_a_mermaid_xychart_and_the_numbers_beneath():
    document = explained(deep_report(gpu=True))
    output = markdown(document)
    block = output[output.index("```mermaid"):]
    block = block[:block.index("\n```\n")]
    assert block.splitlines()[1:] == [
        "xychart-beta",
        '    title "float32 matmul GFLOPS by matrix size: GPU line, CPU bars"',
        '    x-axis "matrix size N" ["64", "256", "512", "2048"]',
        '    y-axis "GFLOPS" 0 --> 5000.0',
        '    bar "CPU" [10.0, 60.0, 150.0, 240.0]',
        '    line "GPU" [1.0, 40.0, 600.0, 4000.0]',
    ]
    table = output[output.index("| N | GPU GFLOPS | CPU GFLOPS | GPU / CPU |"):].splitlines()
    assert table[2:6] == ["| 64 | 1.0 | 10 | 0.10x |", "| 256 | 40 | 60 | 0.67x |", "| 512 | 600 | 150 | 4.00x |",
                          "| 2048 | 4000 | 240 | 16.67x |"]
    assert output.index("```mermaid") < output.index("<summary>Facts (JSON)</summary>")


def test_json_is_unchanged_by_the_pictures(tmp_path):
    path = write(tmp_path, deep_report(gpu=True))
    code, out, _ = run_cli(["explain", path, "--only", "workload", "--json"])
    document = json.loads(out)
    assert "mermaid" not in out and "█" not in out
    result = document["results"][0]
    assert set(result) == {"id", "title", "status", "summary", "details", "remediation", "evidence", "duration_ms"}


def test_explain_of_a_saved_deep_report_shows_both_pictures(tmp_path):
    path = write(tmp_path, deep_report(gpu=True))
    _, out, _ = run_cli(["explain", path, "--only", "probe,workload"])
    assert len(chart_rows(out)) == 8
    _, out, _ = run_cli(["explain", path, "--only", "probe,workload", "--format", "markdown"])
    assert out.count("```mermaid") == 1 and "| 2048 | 4000 | 240 | 16.67x |" in out


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """The CLI with stdout on a pseudo-terminal, as a user sees it."""
    main, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "tfdoctor", *args], stdout=secondary, stderr=subprocess.PIPE,
                               env={**os.environ, **env})
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the child is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(timeout=60) == 0, process.stderr.read()
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_the_terminal_shows_the_bar_chart_and_no_colour_under_no_color(tmp_path):
    path = write(tmp_path, deep_report())
    screen = _on_a_terminal(["explain", str(path), "--only", "workload"], {"NO_COLOR": "1"})
    assert "\x1b[" not in screen
    assert [(s, d) for s, d, _, _ in chart_rows(screen)] == [(str(n), "CPU") for n in CPU_CURVE]


# ------------------------------------------------------------------------------ the real Mermaid parser

@pytest.fixture(scope="module")
def mermaid_directory():
    return mermaid_support.parser_directory()


def test_mermaid_accepts_the_chart_and_reads_the_report_figures(mermaid_directory):
    report = deep_report(gpu=True)
    blocks = mermaid_support.parse_markdown(markdown(explained(report)), mermaid_directory)
    assert len(blocks) == 1 and blocks[0]["ok"], blocks
    data = blocks[0]["data"]
    assert blocks[0]["type"] == "xychart" and blocks[0]["drawables"] > 0
    assert data["xAxis"]["categories"] == ["64", "256", "512", "2048"]
    assert (data["yAxis"]["min"], data["yAxis"]["max"]) == (0, 5000)
    plots = {plot["title"]: (plot["type"], [value for _, value in plot["data"]]) for plot in data["plots"]}
    assert plots == {"CPU": ("bar", [10, 60, 150, 240]), "GPU": ("line", [1, 40, 600, 4000])}


def test_the_mermaid_parser_rejects_a_broken_chart(mermaid_directory):
    """The parser is a real one: a chart cut short is an error, so an accepted chart means something."""
    block = mermaid_xychart(crossover_chart(deep_report()["facts"]))
    broken = block.rsplit("]", 1)[0]
    blocks = mermaid_support.parse_markdown(f"```mermaid\n{broken}\n```\n", mermaid_directory)
    assert blocks[0]["ok"] is False and "Expecting" in blocks[0]["error"]


@pytest.mark.parametrize("gpu", [False, True])
def test_mermaid_accepts_the_chart_of_hostile_figures_too(mermaid_directory, gpu):
    document = explained(deep_report(gpu=gpu))
    for row, bad in zip(document["facts"]["tensorflow"]["workload"]["crossover"]["sizes"], (float("nan"), -1, "7e3")):
        row["cpu"]["gflops"] = bad
    blocks = mermaid_support.parse_markdown(markdown(document), mermaid_directory)
    assert len(blocks) == 1 and blocks[0]["ok"], blocks
    assert len(blocks[0]["data"]["xAxis"]["categories"]) == len(CPU_CURVE if not gpu else GPU_LADDER[0]) - 3


@MARKS[0]  # integration: the real TensorFlow of the test setup
@MARKS[1]
def test_a_real_deep_run_in_markdown_holds_a_chart_mermaid_accepts(mermaid_directory, tmp_path, tmp_path_factory):
    """A real `tfdoctor --deep` run with the test setup's TensorFlow (the CPU curve here; the run is shared
    with tests/child/test_workload_integration.py), in Markdown through `tfdoctor explain --format markdown`."""
    saved = tmp_path / "deep.json"
    saved.write_text(shared_doctor_run(DEEP_RUN, tmp_path_factory).stdout, encoding="utf-8")
    code, markdown_text, errors = run_cli(["explain", saved, "--format", "markdown"])
    assert code != 2 and "```mermaid" in markdown_text, errors  # 2: the saved report unreadable
    blocks = mermaid_support.parse_markdown(markdown_text, mermaid_directory)
    assert len(blocks) == 1 and blocks[0]["ok"], blocks
    plots = blocks[0]["data"]["plots"]
    assert [plot["title"] for plot in plots] == ["CPU"] and len(plots[0]["data"]) >= 4
    assert all(value > 0 for _, value in plots[0]["data"])
