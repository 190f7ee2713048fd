"""Markdown ready to paste into a GitHub issue: the verdict, the problems with their fixes, a compact
table of what passed, the checks that did not apply and the facts folded away in <details> blocks.

GitHub-specific care: prose is escaped (a redacted `<user>` would otherwise vanish as an HTML tag,
a `|` would break the table, `@rpath` would notify a user and `#62860` back-link an issue); fences are longer than any backtick run they hold; the facts JSON is
compact (one line per package, scalar lists wrapped) because an issue body is limited to 65,536
characters, and a report that is still too long says so instead of being cut by GitHub.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tfdoctor.render import (
    VERDICT_WORDS,
    choice_cost,
    plan_steps_named,
    platform_line,
    step_reasons,
    steps_phrase,
    summary_line,
)
from tfdoctor.render.charts import markdown_charts
from tfdoctor.render.formats import Look, OutputFormat
from tfdoctor.render.markdown_text import EMOJI, code, escape  # noqa: F401 - EMOJI: this format's words too
from tfdoctor.render.sanitize import clean_document
from tfdoctor.report.document import ReportDocument

GITHUB_BODY_LIMIT = 65_536  # characters in an issue or comment body
WRAP = 100


def fenced(body: str, info: str = "") -> list[str]:
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * (longest + 1)
    return [f"{fence}{info}", body, fence]


def compact_json(value: Any, indent: int = 0) -> str:
    """JSON, indented, but a list of scalars wrapped into a few lines and each object inside a list on
    one line (a package per line): the same data in a fraction of the characters."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {compact_json(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        if all(not isinstance(v, (dict, list)) for v in value):
            one_line = json.dumps(value, ensure_ascii=False)
            if len(one_line) + indent <= WRAP:
                return one_line
            rows: list[str] = []
            row: list[str] = []
            for item in (json.dumps(v, ensure_ascii=False) for v in value):
                if row and len(inner) + len(", ".join(row + [item])) > WRAP:
                    rows.append(", ".join(row))
                    row = []
                row.append(item)
            rows.append(", ".join(row))
            return "[\n" + ",\n".join(inner + r for r in rows) + f"\n{pad}]"
        lines = [inner + (json.dumps(v, ensure_ascii=False) if isinstance(v, dict) else compact_json(v, indent + 2))
                 for v in value]
        return "[\n" + ",\n".join(lines) + f"\n{pad}]"
    return json.dumps(value, ensure_ascii=False)


VERDICT_EMOJI = {"fail": "❌", "warn": "⚠️", "pass": "✅"}


def _header(document: dict[str, Any]) -> list[str]:
    tool = document.get("tool") or {}
    verdict = ReportDocument(document).verdict
    lines = [f"### tfdoctor {escape(tool.get('version', ''))} report", "", code(platform_line(document)), ""]
    notes = []
    if document.get("explained_from"):
        notes.append(f"Diagnosed again with today's checks from {escape(document['explained_from'])}.")
    if document.get("redacted") is False:
        notes.append("**Not redacted** (`--no-redact`): paths, user and host names appear as they are.")
    if notes:
        lines += ["> " + "<br>\n> ".join(notes), ""]
    outcome = verdict.outcome
    lines += [f"**{VERDICT_EMOJI[outcome]} {VERDICT_WORDS[outcome]}**: {summary_line(verdict.counts)}", ""]
    return lines


def _not_applicable(results: list[dict[str, Any]]) -> list[str]:
    """The checks that did not apply (or lacked their facts), folded into one <details> block."""
    if not results:
        return []
    ids = ", ".join(f"`{r['id']}`" for r in results)
    lines = [f"<details><summary>{len(results)} not applicable or not recorded: {ids}</summary>", ""]
    lines += [f"- `{r['id']}`: {escape(r['summary'])}" for r in results]
    return lines + ["", "</details>", ""]


def _problem(result: dict[str, Any]) -> list[str]:
    status = result["status"]
    lines = [f"**{EMOJI.get(status, '')} {escape(result['title'])}** (`{result['id']}`): {escape(result['summary'])}", ""]
    details = result.get("details") or ()
    if details:
        lines += [f"- {escape(detail)}" for detail in details] + [""]
    fix = result.get("remediation")
    if fix:
        lines += [f"**Fix:** {escape(fix['advice'])}", ""]
        if fix.get("plan_steps"):
            lines += [f"Carried out by plan {plan_steps_named(fix['plan_steps'])} (below).", ""]
        if fix.get("commands"):
            lines += fenced("\n".join(fix["commands"]), "sh") + [""]
        if fix.get("url"):
            lines += [f"See: <{fix['url']}>" if " " not in fix["url"] else f"See: {escape(fix['url'])}", ""]
    return lines


def _plan(plan: dict[str, Any]) -> list[str]:
    """'To fix this environment: N steps': the commands once, in order, in one block to paste."""
    steps = plan.get("steps") or []
    conflicts = plan.get("conflicts") or []
    if not steps and not conflicts and not plan.get("notes") and not plan.get("choices"):  # a note alone: refused words
        return []
    lines = []
    if steps:
        lines += [f"#### To fix this environment: {steps_phrase(len(steps))}", ""]
        runnable = [s["command"] for s in steps if not s.get("manual")]
        if runnable:
            lines += fenced("\n".join(runnable), "powershell" if plan.get("shell") == "powershell" else "sh") + [""]
        for step in steps:
            why = step_reasons(step)
            manual = " (in your shell or project)" if step.get("manual") else ""
            span = code(step["command"])
            lines.append(f"{step['number']}. {span}{manual}" + (f": {escape(why)}" if why else ""))
        lines.append("")
    move = plan.get("moves_tensorflow")
    if move:
        lines += [f"**TensorFlow moves** from {code(move['from'])} to {code(move['to'])}: {escape(move['why'])}", ""]
    lines += [f"- {escape(note)}" for note in plan.get("notes") or ()] + ([""] if plan.get("notes") else [])
    for conflict in conflicts:
        lines += [f"**No command can satisfy** {escape(conflict['why'])}:", ""]
        lines += [f"- {escape((w['check'] + ': ') if w.get('check') else '')}{code(w['requirement'])} ({escape(w.get('reason', ''))})"
                  for w in conflict.get("wants") or ()] + [""]
        if conflict.get("choices") and not plan.get("choices"):
            lines += ["Your choices: " + "; or ".join(escape(choice) for choice in conflict["choices"]) + ".", ""]
    for choice in plan.get("choices") or ():
        chosen = choice.get("plan") or {}
        command = f"tfdoctor fix --choice {choice['number']}"
        lines += [f"#### Choice {choice['number']}: {escape(str(choice.get('summary', '')))}", "",
                  f"Costs: {escape(choice_cost(choice))}. {code(command)} proves and applies it.", ""]
        runnable = [s["command"] for s in chosen.get("steps") or () if not s.get("manual")]
        if runnable:
            lines += fenced("\n".join(runnable), "powershell" if chosen.get("shell") == "powershell" else "sh") + [""]
        lines += [f"- {escape(note)}" for note in chosen.get("notes") or ()] + ([""] if chosen.get("notes") else [])
    return lines


def _all_details(results: list[dict[str, Any]]) -> list[str]:
    lines = ["<details><summary>Every check in detail</summary>", ""]
    for result in results:
        lines.append(f"- `{result['id']}` ({result['status']}, {result.get('duration_ms', 0):.1f} ms): "
                     f"{escape(result['summary'])}")
        lines += [f"  - {escape(detail)}" for detail in result.get("details") or ()]
    return lines + ["", "</details>", ""]


def render(document: dict[str, Any], verbose: bool = False) -> str:
    """Problems and their fixes first, then a compact table of what passed, then the checks that did
    not apply folded away, then (with verbose) every detail, then the facts."""
    document = clean_document(document)
    results = document.get("results") or []
    lines = _header(document)
    problems = [r for r in results if r["status"] in ("fail", "error", "warn")]
    if problems:
        lines += ["#### Problems", ""]
        for result in problems:
            lines += _problem(result)
    lines += _plan(document.get("plan") or {})
    passed = [r for r in results if r["status"] == "pass"]
    if passed:
        lines += ["#### Passed", "", "| Check | Result |", "|---|---|"]
        lines += [f"| ✅ `{r['id']}` | {escape(r['summary'])} |" for r in passed] + [""]
    lines += _not_applicable([r for r in results if r["status"] == "skip"])
    for result in results:  # a check's compact table of figures (workload)
        table = (result.get("evidence") or {}).get("table")
        if table and result["status"] != "skip":
            lines += [f"#### `{result['id']}` figures", "", "| Section | Figure | Value |", "|---|---|---|"]
            lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in table] + [""]
    lines += markdown_charts(document, fenced)  # the --deep crossover as a Mermaid xychart (render/charts.py)
    if verbose:
        lines += _all_details(results)
    lines += ["<details><summary>Facts (JSON)</summary>", ""]
    lines += fenced(compact_json(document.get("facts") or {}), "json")
    lines += ["", "</details>", ""]
    text = "\n".join(lines)
    if len(text) > GITHUB_BODY_LIMIT:
        warning = (f"> **Too long for one GitHub comment** ({len(text):,} characters; the limit is "
                   f"{GITHUB_BODY_LIMIT:,}): attach the JSON report instead, `tfdoctor --json -o report.json`.\n\n")
        text = warning + text
    return text


def _report(document: Any, look: "Look") -> str:
    return render(document, verbose=look.verbose)


def _diff(document: Any, look: "Look") -> str:
    from tfdoctor.render.diff import render_markdown

    return render_markdown(document, look.verbose)


def _scan(rows: Any, look: "Look") -> str:
    from tfdoctor.render.scan_table import render_markdown

    return render_markdown(rows)


FORMAT = OutputFormat("markdown", "Markdown for an issue or a pull request.", report=_report, diff=_diff, scan=_scan)
