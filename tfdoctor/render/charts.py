"""Pictures of the matmul figures: GFLOPS by matrix size for each device, as a bar chart in the terminal
(rich) and as a Mermaid `xychart-beta` block with the numbers in a table beneath in Markdown.

Two charts: the probe's (one size per device; in the terminal only, and only when it timed a GPU
against the CPU: a lone bar compares with nothing) and the `--deep` crossover's (every size on every
device; terminal and Markdown). Both are read from the document's facts (`facts.tensorflow.probe.sides`,
`facts.tensorflow.workload.crossover.sizes`), which every JSON report keeps, so `tfdoctor explain` of a
saved report draws them too and JSON stays as it was. A saved report comes from strangers: a figure is
drawn only when it is a plausible number (finite, non-negative, below a zettaFLOPS), and every label is
the chart's own (sizes are integers, devices GPU or CPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

DEVICES = ("gpu", "cpu")  # the order rows are drawn in; GPU first, as in the probe's summary
BAR_STYLES = {"GPU": "magenta", "CPU": "cyan"}
BAR_WIDTH = (8, 48)  # columns of the longest bar: at least, at most (compact, even on a wide terminal)
CROSSOVER_TITLE = "float32 matmul GFLOPS by matrix size N (N x N), best block"
PROBE_TITLE = "float32 matmul GFLOPS, the probe's size for each device, best block"
PLAUSIBLE_GFLOPS = 1e12  # a zettaFLOPS: beyond it a figure in a saved report is not drawn


@dataclass(frozen=True)
class Point:
    size: int  # N of an N x N matmul
    device: str  # "GPU" or "CPU"
    gflops: Optional[float]  # None: timed but no figure (an error, a missing value)


@dataclass(frozen=True)
class Chart:
    title: str
    points: tuple[Point, ...]  # in drawing order: by size, then GPU before CPU

    @property
    def devices(self) -> list[str]:
        return [d.upper() for d in DEVICES if any(p.device == d.upper() for p in self.points)]

    @property
    def sizes(self) -> list[int]:
        return sorted({p.size for p in self.points})

    @property
    def top(self) -> float:
        return max((p.gflops for p in self.points if p.gflops is not None), default=0.0)

    def value(self, size: int, device: str) -> Optional[float]:
        return next((p.gflops for p in self.points if p.size == size and p.device == device), None)


def figure(value: Any) -> Optional[float]:
    """A GFLOPS figure from facts, or None when it is not a plausible number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and 0 <= value < PLAUSIBLE_GFLOPS else None


def size_of(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1_000_000 else None


def _tensorflow(facts: Any) -> Mapping[str, Any]:
    tensorflow = facts.get("tensorflow") if isinstance(facts, Mapping) else None
    return tensorflow if isinstance(tensorflow, Mapping) else {}


def crossover_chart(facts: Any) -> Optional[Chart]:
    """The --deep crossover: every size the workload timed, on each device it timed."""
    workload = _tensorflow(facts).get("workload")
    crossover = workload.get("crossover") if isinstance(workload, Mapping) else None
    rows = crossover.get("sizes") if isinstance(crossover, Mapping) else None
    points = []
    for row in rows if isinstance(rows, list) else ():
        size = size_of(row.get("n")) if isinstance(row, Mapping) else None
        if size is None:
            continue
        for kind in DEVICES:
            side = row.get(kind)
            if isinstance(side, Mapping):
                points.append(Point(size, kind.upper(), figure(side.get("gflops"))))
    points.sort(key=lambda p: (p.size, DEVICES.index(p.device.lower())))
    return Chart(CROSSOVER_TITLE, tuple(points)) if any(p.gflops is not None for p in points) else None


def probe_chart(facts: Any) -> Optional[Chart]:
    """The probe's GPU against its CPU, each at the size the probe chose for it; None with one device."""
    probe = _tensorflow(facts).get("probe")
    sides = probe.get("sides") if isinstance(probe, Mapping) else None
    points = []
    for kind in DEVICES:
        side = sides.get(kind) if isinstance(sides, Mapping) else None
        size = size_of(side.get("n")) if isinstance(side, Mapping) else None
        if size is not None and isinstance(side, Mapping):
            points.append(Point(size, kind.upper(), figure(side.get("gflops_best"))))
    if len(points) < 2 or all(p.gflops is None for p in points):
        return None
    return Chart(PROBE_TITLE, tuple(points))


CHARTS = {"probe": probe_chart, "workload": crossover_chart}  # the result each chart is drawn under


def chart_for(document: Mapping[str, Any], result: Mapping[str, Any]) -> Optional[Chart]:
    make = CHARTS.get(str(result.get("id")))
    if make is None or result.get("status") == "skip":
        return None
    return make(document.get("facts") or {})


def gflops_text(value: Optional[float]) -> str:
    if value is None:
        return "?"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


# ------------------------------------------------------------------------------------------ terminal

def terminal_chart(document: Mapping[str, Any], result: Mapping[str, Any], indent: int, width: int) -> Any:
    """The bar chart drawn under `result`'s line (a rich renderable), or None when it has none.

    One row per size and device: the size, the device's name, a bar scaled to the chart's largest
    figure (linear: the bars are the GFLOPS), the figure, and on a GPU row its speed against the CPU at
    that size, which says who wins where the bars are too short to tell. The device is written on every
    row, so the chart reads the same without colour (NO_COLOR, a pipe); colour only tells GPU from CPU
    at a glance. The bars fit into `width` columns."""
    chart = chart_for(document, result)
    if chart is None:
        return None
    from rich.bar import Bar
    from rich.console import Group
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    ratios = {p.size: speedup(chart, p.size) for p in chart.points if p.device == "GPU"}
    size_width = max(len(str(size)) for size in chart.sizes)
    value_width = max(len(gflops_text(p.gflops)) for p in chart.points)
    ratio_width = max((len(text) + 1 for text in ratios.values() if text), default=0)
    fixed = size_width + 3 + value_width + 3 + ratio_width  # size, device, figure, ratio and the gaps
    bar_width = max(BAR_WIDTH[0], min(BAR_WIDTH[1], width - indent - fixed))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(width=bar_width, no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    if ratio_width:
        grid.add_column(no_wrap=True)
    top = chart.top or 1.0
    shown = None
    for point in chart.points:
        # a figure too small for the narrowest block still gets one: a sliver is not a zero
        length = max(point.gflops, top / (bar_width * 8)) if point.gflops else 0.0
        style = BAR_STYLES[point.device]
        cells: list[Any] = [str(point.size) if point.size != shown else "", Text(point.device, style),
                 Bar(top, 0, length, width=bar_width, color=style), gflops_text(point.gflops)]
        if ratio_width:
            cells.append(Text((ratios.get(point.size) or "") if point.device == "GPU" else "", "dim"))
        grid.add_row(*cells)
        shown = point.size
    return Padding(Group(Text(chart.title, style="dim"), grid), (0, 0, 0, indent))


def speedup(chart: Chart, size: int) -> Optional[str]:
    """'4.00x CPU': the GPU's figure over the CPU's at one size, when both were measured."""
    gpu, cpu = chart.value(size, "GPU"), chart.value(size, "CPU")
    return f"{gpu / cpu:.2f}x CPU" if gpu is not None and cpu else None


# ------------------------------------------------------------------------------------------ Markdown

def nice_ceiling(value: float) -> float:
    """The y axis's end: the smallest 1, 2 or 5 times a power of ten at or above `value`."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value)


def mermaid_number(value: float) -> str:
    """A number as xychart's grammar reads it: digits and one optional decimal part, never an exponent."""
    return f"{value:.1f}"


def mermaid_xychart(chart: Chart) -> Optional[str]:
    """The chart as a Mermaid xychart-beta: CPU as bars, GPU as a line over them (xychart draws two bar
    series on top of each other). Sizes missing a figure on some device are left out (xychart pairs the
    n-th value with the n-th category); the table beneath has them all. None when no size is complete."""
    devices = chart.devices
    sizes = [s for s in chart.sizes if all(chart.value(s, d) is not None for d in devices)]
    if not sizes:
        return None
    styles = {"CPU": "bar", "GPU": "line"}
    how = ", ".join(f"{d} {'bars' if styles[d] == 'bar' else 'line'}" for d in devices)
    lines = ["xychart-beta",
             f'    title "float32 matmul GFLOPS by matrix size: {how}"',
             '    x-axis "matrix size N" [' + ", ".join(f'"{s}"' for s in sizes) + "]",
             f'    y-axis "GFLOPS" 0 --> {mermaid_number(nice_ceiling(chart.top))}']
    for device in sorted(devices, key=lambda d: styles[d] != "bar"):  # the bars first, the line drawn over them
        # the ignore below: `sizes` holds only the sizes with a figure on every device (never None)
        values = ", ".join(mermaid_number(chart.value(s, device)) for s in sizes)  # type: ignore[arg-type]
        lines.append(f'    {styles[device]} "{device}" [{values}]')
    return "\n".join(lines)


def markdown_table(chart: Chart) -> list[str]:
    devices = chart.devices
    both = devices == ["GPU", "CPU"]
    header = ["N"] + [f"{d} GFLOPS" for d in devices] + (["GPU / CPU"] if both else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    for size in chart.sizes:
        values = [chart.value(size, d) for d in devices]
        timed = [any(p.size == size and p.device == d for p in chart.points) for d in devices]
        cells = [str(size)] + [gflops_text(v) if t else "–" for v, t in zip(values, timed)]
        if both:
            cells.append((speedup(chart, size) or "–").replace(" CPU", ""))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown_charts(document: Mapping[str, Any], fenced: Any) -> list[str]:
    """Markdown lines for the crossover of a --deep run: a heading, the Mermaid block, the table.

    The probe's two figures (GPU and CPU, each at its own size) are in its summary line already; a
    chart pays off for the curve. `fenced(body, info)` is the Markdown renderer's own fence."""
    result = next((r for r in document.get("results") or () if r.get("id") == "workload"), None)
    chart = chart_for(document, result) if result is not None else None
    if chart is None:
        return []
    lines = [f"#### `workload`: {chart.title}", ""]
    mermaid = mermaid_xychart(chart)
    if mermaid is not None:
        lines += fenced(mermaid, "mermaid") + [""]
    return lines + markdown_table(chart) + [""]

