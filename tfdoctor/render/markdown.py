"""Markdown ready to paste into a GitHub issue: summary table, problems with hints, facts folded."""

from __future__ import annotations

import json
from typing import Any

from tfdoctor.render import STATUS_SYMBOLS, STATUS_WORDS, platform_line, summary_line

EMOJI = {"pass": "✅", "warn": "⚠️", "fail": "❌", "skip": "➖", "error": "💥"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(document: dict[str, Any], verbose: bool = False) -> str:
    tool = document.get("tool") or {}
    lines = [
        f"### tfdoctor {tool.get('version', '')} report",
        "",
        f"`{platform_line(document)}`",
        "",
    ]
    if document.get("redacted") is False:
        lines += ["> **Not redacted**: paths, user and host names appear as they are.", ""]
    lines += ["| | Check | Result |", "|---|---|---|"]
    results = document.get("results") or []
    for result in results:
        status = result["status"]
        lines.append(f"| {EMOJI[status]} {STATUS_WORDS[status]} | `{result['id']}` | {_cell(result['summary'])} |")
    lines += ["", f"**{summary_line(document.get('totals') or {})}**", ""]

    problems = [r for r in results if r["status"] in ("fail", "error", "warn")]
    if problems:
        lines += ["#### Problems", ""]
        for result in problems:
            lines.append(f"- {STATUS_SYMBOLS[result['status']]} **{result['title']}** (`{result['id']}`): "
                         f"{result['summary']}")
            for detail in result.get("details") or ():
                lines.append(f"  - {detail}")
            fix = result.get("remediation")
            if fix:
                lines.append(f"  - Fix: {fix['advice']}")
                if fix.get("commands"):
                    lines += ["", "    ```sh", *(f"    {c}" for c in fix["commands"]), "    ```", ""]
                if fix.get("url"):
                    lines.append(f"  - See: {fix['url']}")
        lines.append("")

    lines += [
        "<details><summary>Facts</summary>",
        "",
        "```json",
        json.dumps(document.get("facts") or {}, indent=2, ensure_ascii=False),
        "```",
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)
