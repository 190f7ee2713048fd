"""`tfdoctor scan` output: one table of environments (text, Markdown) or the rows as JSON.

Rows come from tfdoctor/scan/summary.py (already redacted); every string is stripped of control
characters (render/sanitize.py) before a terminal or Markdown sees it: paths and summaries come from
the machine and from TensorFlow's error text."""

from __future__ import annotations

import io
import json
from typing import Any, Mapping, Sequence

from tfdoctor._version import __version__
from tfdoctor.render.sanitize import clean_document

VERDICT_STYLES = {"pass": "green", "warn": "yellow", "fail": "red", "cannot run": "magenta"}
SUMMARY_LIMIT = 160  # characters of the first problem's summary in a table cell


def headline(rows: Sequence[Mapping[str, Any]]) -> str:
    working = [r for r in rows if r["exit_code"] == 0]
    with_gpu = [r for r in working if r.get("gpus")]
    if not rows:
        return "no Python environments found"
    return (f"{len(rows)} environment{'s' if len(rows) != 1 else ''}: {len(working)} working "
            f"({len(with_gpu)} with a GPU), {len(rows) - len(working)} not")


def cells(entry: Mapping[str, Any]) -> list[str]:
    """environment, Python, TensorFlow, GPU listed, verdict, first problem: as words."""
    tensorflow = entry.get("tensorflow") or ("not installed" if entry["verdict"] != "cannot run" else "–")
    if entry.get("tensorflow") and entry.get("tensorflow_imported") is False:
        tensorflow += " (import fails)"
    gpus = entry.get("gpus")
    gpu = "–" if gpus is None else (f"yes ({gpus})" if gpus else "no")
    problem = entry.get("first_problem")
    if entry.get("reason"):
        why = entry["reason"]
    elif problem:
        why = f"{problem['id']}: {problem['summary']}"
    else:
        why = ""
    if len(why) > SUMMARY_LIMIT:
        why = why[:SUMMARY_LIMIT - 1] + "…"
    return [entry["environment"], entry.get("python_version") or "–", tensorflow, gpu, entry["verdict"], why]


HEADERS = ["environment", "Python", "TensorFlow", "GPU listed", "verdict", "first failing check"]


def render_text(rows: Sequence[Mapping[str, Any]], color: bool | None = False, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    rows = clean_document(list(rows))
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=color is False, width=width or 140,
                      highlight=False, soft_wrap=False)
    console.print(Text(f"tfdoctor {__version__} scan · {headline(rows)}", style="bold"))
    if rows:
        table = Table(box=None, pad_edge=False, header_style="bold", show_edge=False)
        for header in HEADERS:  # paths and versions whole; the reason takes what is left, folded
            last = header == HEADERS[-1]
            table.add_column(header, overflow="fold", no_wrap=not last, ratio=1 if last else None)
        for entry in rows:
            values: list[Any] = cells(entry)  # the verdict becomes a styled Text
            values[4] = Text(values[4], VERDICT_STYLES.get(values[4], ""))
            table.add_row(*[v if isinstance(v, Text) else Text(v) for v in values])
        console.print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def render_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    from tfdoctor.render.markdown_text import code, escape

    rows = clean_document(list(rows))
    lines = [f"### tfdoctor {__version__} scan", "", f"**{escape(headline(rows))}**", ""]
    if rows:
        lines += ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        for entry in rows:
            values = cells(entry)
            lines.append("| " + " | ".join([code(v) if i == 0 else escape(v) for i, v in enumerate(values)]) + " |")
        lines.append("")
    return "\n".join(lines)


def scan_document(rows: Sequence[Mapping[str, Any]], redacted: bool) -> dict[str, Any]:
    """`scan --json`'s document: the tool, the headline and one row per environment, best first."""
    return {"tool": {"name": "tfdoctor", "version": __version__}, "redacted": redacted,
            "summary": headline(rows), "environments": list(rows)}


def render_json(rows: Sequence[Mapping[str, Any]], redacted: bool) -> str:
    return json.dumps(scan_document(rows, redacted), indent=2, ensure_ascii=False) + "\n"


class ProgressBar:
    """A transient rich progress bar on stderr (shown on a terminal only): environments done of all,
    and the one that just finished. A context manager; call it with each finished environment's label."""

    def __init__(self, total: int) -> None:
        import sys

        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.table import Column

        # the last environment's path takes what is left of the line, cut short: the count never is
        last = TextColumn("{task.description}", style="dim",
                          table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=0))
        self.progress = Progress(TextColumn("diagnosing"), BarColumn(bar_width=24), MofNCompleteColumn(),
                                 TimeElapsedColumn(), last, console=Console(file=sys.stderr), transient=True,
                                 expand=True)
        self.task = self.progress.add_task("", total=total)

    def __enter__(self) -> "ProgressBar":
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def __call__(self, label: str) -> None:
        from tfdoctor.render.sanitize import clean

        self.progress.update(self.task, advance=1, description=clean(label))
