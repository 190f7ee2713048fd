from __future__ import annotations

from typing import Any

from tfdoctor.render.formats import Look, OutputFormat
from tfdoctor.render.sanitize import json_dumps


def render(document: dict[str, Any], verbose: bool = False) -> str:
    return json_dumps(document) + "\n"


def _report(document: Any, look: "Look") -> str:
    return render(document, verbose=look.verbose)


def _diff(document: Any, look: "Look") -> str:
    from tfdoctor.render.diff import render_json

    return render_json(document)


def _scan(rows: Any, look: "Look") -> str:
    from tfdoctor.render.scan_table import render_json

    return render_json(rows, redacted=look.redacted)


FORMAT = OutputFormat("json", "The versioned JSON document (tfdoctor/schema/).", report=_report, diff=_diff,
                      scan=_scan)
