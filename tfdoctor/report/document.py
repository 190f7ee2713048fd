"""The one report document: the JSON every door prints, posts, stores or hands to an assistant, and its verdict.

A run, an `explain`, a scan's row, the team server's fleet table, the OpenMetrics lines and the Python API all
ask one question of a report: is it OK? The answer (the worst status, the exit code, the first problem, the
counts) is computed here, once per document, from its results; nothing else decides it.

A document from outside (a file, an MCP client, a reporting machine) comes in through `ReportDocument.from_dict`,
which checks its shape against the schema's top level before anything reads it; `to_dict` gives a copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Mapping, Optional

EXIT_OK = 0  # no failures (warnings allowed unless --strict)
EXIT_PROBLEMS = 1  # at least one fail or error (with --strict: or warn)
EXIT_UNUSABLE = 2  # the doctor could not run: bad arguments, unknown check, unusable target or input
EXIT_NOT_POSTED = 4  # --report-required: no check failed, but a report did not reach the server (it is kept)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
EXIT_TERMINATED = 143  # SIGTERM (128 + SIGTERM)

STATUSES = ("pass", "warn", "fail", "skip", "error")
WORST_FIRST = ("error", "fail", "warn", "pass")  # skip says nothing about the environment
FAILING = ("fail", "error")  # an `error` (a check that crashed) fails a pre-flight: it could not judge


def report_schema() -> dict[str, Any]:
    """The versioned JSON schema of a report document (schema/report.schema.json, draft 2020-12), a fresh copy: for
    a validator that checks deeper than `from_dict`."""
    from tfdoctor.schema import report_schema as read

    return read()


class CannotRun(Exception):
    """The doctor cannot run at all (exit 2): bad arguments, an unknown check, an unusable interpreter, an unreadable
    report, a bad configuration. The message is one line, shown as is."""


class NotAReport(ValueError):
    """The input is not a report document; the message is one line."""


@dataclass(frozen=True)
class Problem:
    """The first problem of a report: the first check that failed or crashed, else the first that warned."""

    check_id: str
    status: str
    summary: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.check_id, "status": self.status, "summary": self.summary}


@dataclass(frozen=True)
class Verdict:
    """Is this report OK: the worst status, the counts by status, the first problem, and the exit code."""

    status: str  # the worst of error, fail, warn, pass ("pass" when no check passed or failed: all skipped)
    counts: Mapping[str, int]
    first_problem: Optional[Problem]

    @property
    def failed(self) -> bool:
        return self.status in FAILING

    @property
    def outcome(self) -> str:
        """fail, warn or pass: an `error` counts as a failure (the tables' and the scan's column)."""
        return "fail" if self.failed else self.status

    def exit_code(self, strict: bool = False) -> int:
        """The run's exit code: 1 when a check failed or crashed (with `strict`, also when one warned), else 0."""
        return EXIT_PROBLEMS if self.failed or (strict and self.status == "warn") else EXIT_OK

    @classmethod
    def of(cls, results: Iterable[Any]) -> "Verdict":
        """The verdict of results: the document's dicts ({"id", "status", "summary"}) or CheckResult objects.
        Entries that are not results (a hostile report) count for nothing."""
        counts = {status: 0 for status in STATUSES}
        first: dict[str, Problem] = {}
        for result in results:
            check_id, status, summary = _fields(result)
            if status not in counts:
                continue
            counts[status] += 1
            kind = "failing" if status in FAILING else "warn" if status == "warn" else None
            if kind and kind not in first:
                first[kind] = Problem(check_id, status, summary)
        worst = next((status for status in WORST_FIRST if counts[status]), "pass")
        return cls(worst, counts, first.get("failing") or first.get("warn"))


def _fields(result: Any) -> tuple[str, Optional[str], str]:
    if isinstance(result, Mapping):
        return str(result.get("id") or ""), result.get("status"), str(result.get("summary") or "")
    status = getattr(result, "status", None)
    return (str(getattr(result, "check_id", "")), getattr(status, "value", status),
            str(getattr(result, "summary", "") or ""))


# The schema's top level (schema/report.schema.json): what every 1.x report has, and the types of its parts.
_REQUIRED = ("schema_version", "facts", "results")
_TYPES = {"schema_version": str, "facts": dict, "results": list, "totals": dict, "plan": dict, "tool": dict,
          "target": dict, "created_at": str, "redacted": bool}


# The key facts, in the order a drift view lists them; the names match `tfdoctor diff`'s fields.
KEY_FACTS = ("TensorFlow", "CUDA", "cuDNN", "NumPy", "Keras", "Driver", "Python", "GPU")


def _gpu(facts: Mapping[str, Any]) -> Optional[str]:
    from tfdoctor.facts import section

    if isinstance(facts.get("nvidia"), Mapping):
        try:  # a report is untrusted: one that cannot be read still gets its other facts
            from tfdoctor.facts.nvidia_smi import detected_gpus

            names = [str(g.get("name")) for g in detected_gpus(facts) if g.get("name")]
        except Exception:  # noqa: BLE001
            names = []
        if names:
            return ", ".join(names)
    devices = section(facts, "tensorflow").get("devices")
    if isinstance(devices, list):
        gpus = [d for d in devices if isinstance(d, Mapping) and d.get("device_type") == "GPU"]
        if gpus:
            return f"{len(gpus)} GPU" + ("s" if len(gpus) > 1 else "")
    return None


def _driver(facts: Mapping[str, Any]) -> Optional[str]:
    if not isinstance(facts.get("nvidia"), Mapping):
        return None
    try:
        from tfdoctor.facts.nvidia_smi import detected_gpus

        versions = sorted({str(g.get("driver_version")) for g in detected_gpus(facts) if g.get("driver_version")})
    except Exception:  # noqa: BLE001
        return None
    return ", ".join(versions) or None


class ReportDocument:
    """A report document and its verdict. `data` is the JSON document itself (not copied: build it, then wrap it)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def from_dict(cls, data: Any) -> "ReportDocument":
        """A document from outside, its top level checked against the schema's (NotAReport with one line when it
        is not a 1.x report). Deeper parts are read defensively by whoever reads them: a report is untrusted."""
        if not isinstance(data, Mapping):
            raise NotAReport(f"a report is a JSON object, not {type(data).__name__}")
        missing = [key for key in _REQUIRED if key not in data]
        if missing:
            raise NotAReport(f"not a tfdoctor report: no {', '.join(missing)}")
        for key, kind in _TYPES.items():
            if key in data and data[key] is not None and not isinstance(data[key], kind):
                raise NotAReport(f"not a tfdoctor report: {key} is not {kind.__name__}")
        if not str(data["schema_version"]).startswith("1."):
            raise NotAReport(f"schema {data['schema_version']!r}: this tfdoctor reads 1.x reports")
        return cls(dict(data))

    @classmethod
    def from_json(cls, text: str | bytes) -> "ReportDocument":
        try:
            return cls.from_dict(json.loads(text))
        except (ValueError, RecursionError) as exc:
            raise NotAReport(f"not JSON: {str(exc).splitlines()[0][:200]}") from None

    def to_dict(self) -> dict[str, Any]:
        """A copy the caller may change."""
        return json.loads(json.dumps(self.data))

    def key_facts(self) -> dict[str, Optional[str]]:
        """The facts that decide whether TensorFlow works (KEY_FACTS), each at most 200 characters or None."""
        from tfdoctor.facts import installed_version, section
        from tfdoctor.facts.tensorflow_distributions import tensorflow_version

        facts = found if isinstance(found := self.data.get("facts"), Mapping) else {}
        tensorflow = section(facts, "tensorflow")
        build = section(tensorflow, "build_info")
        python = section(facts, "python")

        def text(value: Any) -> Optional[str]:
            return None if value is None else str(value)[:200]

        return {
            "TensorFlow": text(tensorflow.get("version") or tensorflow_version(facts)),
            "CUDA": text(build.get("cuda_version")),
            "cuDNN": text(build.get("cudnn_version")),
            "NumPy": text(installed_version(facts, "numpy")),
            "Keras": text(installed_version(facts, "keras")),
            "Driver": text(_driver(facts)),
            "Python": text(python.get("version")),
            "GPU": text(_gpu(facts)),
        }

    @cached_property
    def verdict(self) -> Verdict:
        results = self.data.get("results")
        return Verdict.of(results if isinstance(results, list) else ())

    @property
    def results(self) -> list[Mapping[str, Any]]:
        results = self.data.get("results")
        return [r for r in results if isinstance(r, Mapping)] if isinstance(results, list) else []

    @property
    def facts(self) -> Mapping[str, Any]:
        facts = self.data.get("facts")
        return facts if isinstance(facts, Mapping) else {}

    @property
    def plan(self) -> Mapping[str, Any]:
        plan = self.data.get("plan")
        return plan if isinstance(plan, Mapping) else {}

    def exit_code(self, strict: bool = False) -> int:
        return self.verdict.exit_code(strict)

    @cached_property
    def check_results(self) -> dict[str, Any]:
        """id -> the typed result (results.model.CheckResult) of each check, for the Python API's readers."""
        from tfdoctor.results.model import CheckResult

        return {r["id"]: CheckResult.from_dict(r) for r in self.results if "id" in r}
