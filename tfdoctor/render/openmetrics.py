"""`--format openmetrics`: one environment's verdict for Prometheus, through node_exporter's textfile
collector (`tfdoctor --format openmetrics -o /var/lib/node_exporter/textfile/tfdoctor.prom`), so a team
with Prometheus needs no server. OpenMetrics text (https://prometheus.io/docs/specs/om/open_metrics_spec/),
which also reads as Prometheus' text format: gauges only, label values escaped, `# EOF` last.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterator, Mapping

from tfdoctor.render.formats import Look, OutputFormat
from tfdoctor.render.sanitize import clean
from tfdoctor.report.document import ReportDocument

STATUSES = ("pass", "warn", "fail", "skip", "error")


def label_value(value: Any) -> str:
    """A label value as the exposition formats escape it: backslash, double quote, newline."""
    text = clean(str(value)).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return text[:500]


def _labels(pairs: Mapping[str, Any]) -> str:
    return "{" + ",".join(f'{name}="{label_value(value)}"' for name, value in pairs.items()) + "}"


def _timestamp(text: Any) -> float | None:
    try:
        return dt.datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _lines(document: Mapping[str, Any]) -> Iterator[str]:
    target = found if isinstance(found := document.get("target"), Mapping) else {}
    python = target.get("python") or ""
    results = [r for r in document.get("results") or () if isinstance(r, Mapping)]
    yield "# HELP tfdoctor_check_status 1 for the status the check reached on this environment, 0 for the others."
    yield "# TYPE tfdoctor_check_status gauge"
    for result in results:
        for status in STATUSES:
            labels = _labels({"check": result.get("id"), "status": status, "python": python})
            yield f"tfdoctor_check_status{labels} {1 if result.get('status') == status else 0}"
    yield "# HELP tfdoctor_checks Checks of this run by status."
    yield "# TYPE tfdoctor_checks gauge"
    verdict = ReportDocument(dict(document)).verdict
    for status in STATUSES:
        yield f"tfdoctor_checks{_labels({'status': status, 'python': python})} {verdict.counts[status]}"
    yield "# HELP tfdoctor_problems 1 when a check failed or crashed (tfdoctor would exit 1), else 0."
    yield "# TYPE tfdoctor_problems gauge"
    yield f"tfdoctor_problems{_labels({'python': python})} {1 if verdict.failed else 0}"
    created = _timestamp(document.get("created_at"))
    if created is not None:
        yield "# HELP tfdoctor_run_timestamp_seconds When this report was made (Unix time)."
        yield "# TYPE tfdoctor_run_timestamp_seconds gauge"
        yield f"tfdoctor_run_timestamp_seconds{_labels({'python': python})} {created:.3f}"
    yield "# EOF"


def render(document: Mapping[str, Any], verbose: bool = False) -> str:
    return "\n".join(_lines(document)) + "\n"


def _report(document: Any, look: "Look") -> str:
    return render(document, verbose=look.verbose)


# One environment's gauges: a diff or a scan table has no metrics of its own (the team server exports a fleet's).
FORMAT = OutputFormat("openmetrics", "Prometheus text format (node_exporter's textfile collector).", report=_report)
