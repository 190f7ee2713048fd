"""`tfdoctor diff` in words: the comparison document (tfdoctor/report/compare.py's `compare`) as text, Markdown or JSON.

It reads only the document; the reports' strings are cleaned first so they never drive a terminal or a page.
"""

from __future__ import annotations

from typing import Any, Mapping

from tfdoctor.render.sanitize import clean_document, json_dumps
from tfdoctor.report.compare import MISSING, SECTION_TITLES
from tfdoctor.report.saved import SavedReport


def _shown(value: Any) -> str:
    return MISSING if value is None else str(value)


def _changed_checks(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in document.get("checks") or () if c["a"] != c["b"]]


def _footer(document: Mapping[str, Any]) -> str:
    checks = document.get("checks") or ()
    same_checks = len(checks) - len(_changed_checks(document))
    return (f"{len(document.get('differences') or ())} differing, {document.get('same_fields', 0)} equal facts; "
            f"{len(checks) - same_checks} of {len(checks)} checks reach a different verdict")


def render_text(document: Mapping[str, Any], verbose: bool = False) -> str:
    document = clean_document(document)  # the reports' strings must not drive the terminal
    reports = document["reports"]
    lines = [f"tfdoctor {document['tool']['version']} diff",
             f"  A: {_describe(reports['a'])}", f"  B: {_describe(reports['b'])}"]
    if document.get("redacted") is False:
        lines.append("Not redacted: this diff shows paths, user and host names as they are.")
    lines.append("")
    if document.get("identical"):
        lines += ["No differences: same facts, same verdicts.", ""]
        return "\n".join(lines)
    differences = document.get("differences") or []
    width = max((len(d["field"]) for d in differences), default=0)
    current = None
    for difference in differences:
        if difference["section"] != current:
            current = difference["section"]
            lines.append(SECTION_TITLES.get(current, current))
        lines.append(f"  {difference['field']:<{width}}  A: {_shown(difference['a'])}")
        lines.append(f"  {'':<{width}}  B: {_shown(difference['b'])}")
    changed = _changed_checks(document)
    if changed:
        lines += ["", "Checks (today's checks on both reports' facts)"]
        id_width = max(len(c["id"]) for c in changed)
        for item in changed:
            lines.append(f"  {item['id']:<{id_width}}  {item['a']} → {item['b']}")
            lines.append(f"  {'':<{id_width}}  A: {item['a_summary']}")
            lines.append(f"  {'':<{id_width}}  B: {item['b_summary']}")
    lines += ["", _footer(document), ""]
    return "\n".join(lines)


def _describe(info: Mapping[str, Any]) -> str:
    return SavedReport(info["path"], info["schema_version"], {}, info.get("tool_version"),
                       info.get("created_at"), info.get("redacted")).describe()


def _md(value: Any) -> str:
    """A table cell: code span (so `<user>` is not eaten as HTML), pipes escaped."""
    if value is None:
        return f"_{MISSING}_"
    text = str(value).replace("\n", " ").replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def render_markdown(document: Mapping[str, Any], verbose: bool = False) -> str:
    from tfdoctor.render.markdown_text import EMOJI, escape

    document = clean_document(document)
    reports = document["reports"]
    lines = [f"### tfdoctor {document['tool']['version']} diff", "",
             f"- **A**: {escape(_describe(reports['a']))}", f"- **B**: {escape(_describe(reports['b']))}", ""]
    if document.get("redacted") is False:
        lines += ["> **Not redacted**: paths, user and host names appear as they are.", ""]
    if document.get("identical"):
        return "\n".join(lines + ["No differences: same facts, same verdicts.", ""])
    differences = document.get("differences") or []
    if differences:
        lines += ["| Section | Field | A | B |", "|---|---|---|---|"]
        for d in differences:
            lines.append(f"| {SECTION_TITLES.get(d['section'], d['section'])} | {_md(d['field'])} | {_md(d['a'])} | {_md(d['b'])} |")
        lines.append("")
    changed = _changed_checks(document)
    if changed:
        lines += ["#### Checks that differ", "", "| Check | A | B |", "|---|---|---|"]
        for c in changed:
            a, b = (f"{EMOJI.get(c[side], '')} {c[side]}: {escape(c[side + '_summary'])}" for side in ("a", "b"))
            lines.append(f"| `{c['id']}` | {a} | {b} |")
        lines.append("")
    lines += [f"_{_footer(document)}_", ""]
    return "\n".join(lines)


def render_json(document: Mapping[str, Any], verbose: bool = False) -> str:
    return json_dumps(document) + "\n"

