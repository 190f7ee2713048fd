"""Renderers turn a report document (the JSON dict, already redacted) into text, JSON or Markdown.

Each output format is one module registered in render/formats.py. They work on the document rather than on
live objects, so `explain` of a saved report and a live
run render identically, and redaction happens once, before any renderer sees the data.
"""

from __future__ import annotations

from typing import Any, Mapping

STATUS_SYMBOLS = {"pass": "✓", "warn": "!", "fail": "✗", "skip": "-", "error": "‼"}
STATUS_WORDS = {"pass": "passed", "warn": "warning", "fail": "failed", "skip": "skipped", "error": "error"}


# What each verdict (report/document.Verdict.outcome) is called at the end of a report.
VERDICT_WORDS = {"fail": "problems found", "warn": "warnings", "pass": "no problems found"}


def summary_line(totals: Mapping[str, Any]) -> str:
    parts = [
        f"{totals.get('pass', 0)} passed",
        f"{totals.get('warn', 0)} warning{'s' if totals.get('warn', 0) != 1 else ''}",
        f"{totals.get('fail', 0)} failed",
    ]
    if totals.get("error"):
        parts.append(f"{totals['error']} crashed")
    parts.append(f"{totals.get('skip', 0)} skipped")
    return ", ".join(parts)


def platform_line(document: dict[str, Any]) -> str:
    facts = document.get("facts") or {}
    host = facts.get("host") or {}
    python = facts.get("python") or {}
    bits = [f"{host.get('system', '?')} {host.get('machine', '?')}"]
    if python:
        bits.append(f"Python {python.get('version', '?')} ({python.get('machine', '?')})")
        if python.get("executable"):
            bits.append(str(python["executable"]))
    return " · ".join(bits)


def steps_phrase(count: int) -> str:
    """'1 step', '3 steps' (the plan's heading in every format)."""
    return f"{count} step{'s' if count != 1 else ''}"


def choice_cost(choice: dict) -> str:
    """What a plan's choice costs, in every format: 'removes tensorflow-decision-forests', 'TensorFlow
    tensorflow==2.21.0 -> tensorflow==2.19.0', or 'removes nothing; TensorFlow stays'."""
    cost = []
    if choice.get("removes"):
        cost.append("removes " + ", ".join(str(name) for name in choice["removes"]))
    move = choice.get("moves_tensorflow")
    if move:
        cost.append(f"TensorFlow {move.get('from')} -> {move.get('to')}")
    return "; ".join(cost) or "removes nothing; TensorFlow stays"


def plan_steps_named(numbers: list[int]) -> str:
    """'step 2', 'steps 1, 3': the plan steps that carry out a check's repairs (every format)."""
    return f"step{'s' if len(numbers) != 1 else ''} {', '.join(str(n) for n in numbers)}"


def step_reasons(step: dict) -> str:
    """A plan step's reasons, each once, in the order the checks gave them."""
    return "; ".join(dict.fromkeys(r.get("reason", "") for r in step.get("reasons") or () if r.get("reason")))
