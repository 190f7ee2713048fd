"""Terminal text in the manner of the best doctors: a line per check with a symbol, the hint under
each problem, a summary line. Colour only on a terminal and never with NO_COLOR (rich honours both)."""

from __future__ import annotations

import io
from typing import Any

from tfdoctor.render import (
    STATUS_SYMBOLS,
    VERDICT_WORDS,
    choice_cost,
    plan_steps_named,
    platform_line,
    step_reasons,
    steps_phrase,
    summary_line,
)
from tfdoctor.render.charts import terminal_chart
from tfdoctor.render.formats import Look, OutputFormat
from tfdoctor.render.sanitize import clean_document
from tfdoctor.report.document import ReportDocument

PROBLEMS = ("warn", "fail", "error")
STYLES = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "dim", "error": "magenta"}


def header_line(document: dict[str, Any]) -> str:
    """'tfdoctor 0.1.0 · Linux x86_64 · Python 3.11.7 (x86_64) · /path' as rich markup (escaped)."""
    from rich.markup import escape

    tool = document.get("tool") or {}
    return f"[bold]tfdoctor {escape(str(tool.get('version', '')))}[/] · {escape(platform_line(document))}"


def result_row(result: dict[str, Any], id_width: int, verbose: bool = False) -> Any:
    """The one line of a result: symbol, id, summary (a rich grid; strings already cleaned)."""
    from rich.markup import escape
    from rich.table import Table

    status = result["status"]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=2)
    grid.add_column(width=id_width, no_wrap=True)
    grid.add_column(ratio=1)
    timing = f" [dim]({result.get('duration_ms', 0):.1f} ms)[/]" if verbose else ""
    grid.add_row(f"[{STYLES[status]}]{STATUS_SYMBOLS[status]}[/]", f"[bold]{escape(result['id'])}[/]",
                 escape(result["summary"]) + timing)
    return grid


def plan_pointer(numbers: list[int]) -> str:
    """'fixed by plan step 2' / 'fixed by plan steps 1, 3' (the plan is printed once, at the end)."""
    return f"fixed by plan {plan_steps_named(numbers)} (below)"


def plan_lines(plan: dict[str, Any]) -> list[str]:
    """The plan as rich markup lines: 'To fix this environment: N steps', the commands once, in order;
    then what no command can fix (conflicts) and why TensorFlow moves, where it does."""
    from rich.markup import escape

    steps = plan.get("steps") or []
    conflicts = plan.get("conflicts") or []
    if not steps and not conflicts and not plan.get("notes") and not plan.get("choices"):  # a note alone: refused words
        return []
    lines = []
    if steps:
        runnable = [s for s in steps if not s.get("manual")]
        lines.append(f"[bold]To fix this environment: {steps_phrase(len(steps))}[/] [dim](paste in order"
                     + ("; or let `tfdoctor fix` verify and apply them" if runnable else "") + ")[/]")
        for step in steps:
            why = step_reasons(step)
            manual = " [dim](in your shell or project; `tfdoctor fix` does not do this)[/]" if step.get("manual") else ""
            lines.append(f"  {step['number']}. [cyan]{escape(step['command'])}[/]{manual}")
            if why:
                lines.append(f"     [dim]{escape(why)}[/]")
    move = plan.get("moves_tensorflow")
    if move:
        lines.append(f"[yellow]TensorFlow moves[/] from {escape(move['from'])} to {escape(move['to'])}: {escape(move['why'])}")
    for note in plan.get("notes") or ():
        lines.append(f"[dim]{escape(note)}[/]")
    for conflict in conflicts:
        lines.append(f"[red]No command can satisfy[/] {escape(conflict['why'])}:")
        for want in conflict.get("wants") or ():
            who = f"{want['check']}: " if want.get("check") else ""
            lines.append(f"  - {escape(who + want['requirement'])} [dim]({escape(want.get('reason', ''))})[/]")
        if conflict.get("choices") and not plan.get("choices"):
            lines.append("  Your choices: " + "; or ".join(escape(choice) for choice in conflict["choices"]) + ".")
    for choice in plan.get("choices") or ():
        chosen = choice.get("plan") or {}
        lines.append(f"[bold]Choice {choice['number']}: {escape(str(choice.get('summary', '')))}[/] "
                     f"[dim]({escape(choice_cost(choice))}; `tfdoctor fix --choice {choice['number']}` proves and applies it)[/]")
        for step in chosen.get("steps") or ():
            manual = " [dim](in your shell or project)[/]" if step.get("manual") else ""
            lines.append(f"  {step['number']}. [cyan]{escape(step['command'])}[/]{manual}")
        if choice.get("moves_tensorflow"):
            lines.append(f"  [dim]{escape(str(choice['moves_tensorflow'].get('why', '')))}[/]")
        for note in chosen.get("notes") or ():
            lines.append(f"  [dim]{escape(note)}[/]")
    lines.append("")
    return lines


def render(document: dict[str, Any], verbose: bool = False, color: bool | None = None, width: int | None = None,
           quiet: bool = False) -> str:
    """The report as terminal text. `quiet`: only the problems and the summary line.

    Every string is stripped of control characters first (render/sanitize.py): a saved report, or
    TensorFlow's coloured log lines, must not drive the terminal; rich markup in them stays escaped."""
    from rich.console import Console
    from rich.markup import escape

    document = clean_document(document)
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=color is False, width=width or 100,
                      highlight=False, soft_wrap=False)
    if not quiet:
        console.print(header_line(document))
        if document.get("explained_from"):
            console.print(f"[dim]facts read from {escape(document['explained_from'])}[/]")
        if document.get("redacted") is False:
            console.print("[bold yellow]Not redacted: this report shows paths, user and host names as they are.[/]")
        console.print()

    results = document.get("results") or []
    id_width = max((len(r["id"]) for r in results), default=10)
    for result in results:
        if quiet and result["status"] not in PROBLEMS:
            continue
        status = result["status"]
        console.print(result_row(result, id_width, verbose))
        indent = " " * (id_width + 4)
        table = (result.get("evidence") or {}).get("table") or ()  # a check's compact table of figures (workload)
        widths = [max(len(str(row[i])) for row in table) for i in range(2)] if table else []
        for row in table:
            cells = [str(cell).ljust(width) for cell, width in zip(row, widths)] + [str(c) for c in row[2:]]
            console.print(indent + escape("  ".join(cells)), soft_wrap=True)
        picture = terminal_chart(document, result, len(indent), console.width)  # GFLOPS by size (render/charts.py)
        if picture is not None:
            console.print(picture)
        show_details = verbose or status in ("fail", "error")
        for line in result.get("details") or () if show_details else ():
            console.print(f"{indent}[dim]{escape(line)}[/]", soft_wrap=True)
        fix = result.get("remediation")
        if fix and status != "pass":
            console.print(f"{indent}[{STYLES[status]}]→[/] {escape(fix['advice'])}", soft_wrap=True)
            if fix.get("plan_steps"):
                console.print(f"{indent}    [cyan]{escape(plan_pointer(fix['plan_steps']))}[/]", soft_wrap=True)
            for command in fix.get("commands") or ():
                console.print(f"{indent}    [cyan]$ {escape(command)}[/]", soft_wrap=True)
            if fix.get("url"):
                console.print(f"{indent}    [dim]{escape(fix['url'])}[/]", soft_wrap=True)

    verdict = ReportDocument(document).verdict
    if not quiet or any(r["status"] in PROBLEMS for r in results):
        console.print()
    style = {"fail": "red", "warn": "yellow", "pass": "green"}[verdict.outcome]
    console.print(f"[{style}]{VERDICT_WORDS[verdict.outcome]}[/]: {summary_line(verdict.counts)}")
    plan = plan_lines(document.get("plan") or {})
    if plan:
        console.print()
        for line in plan[:-1]:  # the plan ends the report: the last thing on screen is what to paste
            console.print(line, soft_wrap=True)
    # Table cells are padded to their width; trailing blanks only get in the way of copy and paste.
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def _report(document: Any, look: "Look") -> str:
    return render(document, verbose=look.verbose, color=look.color, width=look.width, quiet=look.quiet)


def _diff(document: Any, look: "Look") -> str:
    from tfdoctor.render.diff import render_text

    return render_text(document, look.verbose)


def _scan(rows: Any, look: "Look") -> str:
    from tfdoctor.render.scan_table import render_text

    return render_text(rows, color=look.color, width=look.width)


FORMAT = OutputFormat("text", "Text for a terminal or a log.", report=_report, diff=_diff, scan=_scan, colored=True)
