"""drift: what changed between two reports of an environment, from what the reports recorded (pure: no I/O;
the team server computes it once, when a report arrives).

When a report arrives the server keeps its *digest* beside it: the facts as the rows `tfdoctor diff`
compares, and each check's verdict as recorded (id, title, status, summary, and for a problem the names it
mentions). A drift compares two digests: no check runs again, no report is parsed again, so a page reads a
drift stored once when the report came (issue 37).

The rows are ranked by cause: first what the failing checks name (a package, a variable, TensorFlow
itself), in the order of the checks, then what the warning checks name, then the other key facts
(CUDA, cuDNN, the driver, Python), then the rest; last the consequences (`import tensorflow` now fails, the
devices it lists): a changed import is what broke, not why.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping, Optional

from tfdoctor.facts import canonical_name
from tfdoctor.facts.tensorflow_distributions import tensorflow_distribution_names
from tfdoctor.report.compare import fact_rows, row_differences

PROBLEMS = ("error", "fail", "warn")
CONSEQUENCES = {("tensorflow", "TensorFlow import"), ("tensorflow", "Devices")}
# The key facts after the named rows, in the order a reader weighs them (`tfdoctor diff`'s field names).
KEY_ROWS = (("tensorflow", "TensorFlow version"), ("tensorflow", "Built for CUDA"), ("tensorflow", "Built for cuDNN"),
            ("gpu", "NVIDIA driver"), ("gpu", "Driver's CUDA"), ("python", "Python"), ("gpu", "NVIDIA GPUs"),
            ("python", "Python architecture"), ("platform", "Operating system"), ("platform", "glibc"))
NAMED_SECTIONS = ("packages", "environment")  # rows whose field is a name a check can mention
TOKEN = re.compile(r"[a-z0-9][a-z0-9-]*")
SEPARATORS = re.compile(r"[-_.]+")  # as canonical_name (PEP 503) joins them
MAX_TEXT = 20_000  # of one result's text read for names: a hostile report cannot make a post slow
TIERS = ("named by a failing check", "named by a warning check", "key fact", "other", "consequence")


def _texts(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string (and key) inside a result's evidence or remediation, depth-bounded."""
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item, depth + 1)


def names_in(result: Mapping[str, Any]) -> list[str]:
    """The names a check's result mentions (canonical, as package names compare: `ml_dtypes` is `ml-dtypes`,
    `LD_LIBRARY_PATH` is `ld-library-path`), from its summary, details, evidence and remediation."""
    text, size = [], 0
    for part in _texts([result.get("summary"), result.get("details"), result.get("evidence"),
                        result.get("remediation")]):
        text.append(part)
        size += len(part)
        if size > MAX_TEXT:
            break
    # canonical_name of every token at once (lower case, runs of -_. as one -): a report names hundreds
    normalized = SEPARATORS.sub("-", " ".join(text)[:MAX_TEXT].lower())
    return sorted({token.rstrip("-") for token in TOKEN.findall(normalized)})


def digest(document: Mapping[str, Any]) -> dict[str, Any]:
    """What a drift needs of a report, kept beside it: its fact rows and its checks' verdicts as recorded."""
    facts = found if isinstance(found := document.get("facts"), Mapping) else {}
    try:
        rows = fact_rows(facts)
    except Exception:  # noqa: BLE001 - a report is untrusted: one whose facts cannot be read still gets a digest
        rows = []
    results: list[dict[str, Any]] = []
    for result in document.get("results") or ():
        if not isinstance(result, Mapping):
            continue
        status = str(result.get("status"))
        entry: dict[str, Any] = {"id": str(result.get("id")), "title": str(result.get("title") or result.get("id")),
                 "status": status, "summary": str(result.get("summary") or "")[:500]}
        if status in PROBLEMS:
            entry["names"] = names_in(result)
        results.append(entry)
    return {"rows": rows, "results": results}


def _row_names(section: str, field: str) -> set[str]:
    if section in NAMED_SECTIONS:
        return {canonical_name(field)}
    if (section, field) == ("tensorflow", "TensorFlow version"):
        return set(tensorflow_distribution_names())  # the same fact as the TensorFlow package's row
    return set()


def rank(differences: list[dict[str, Any]], results: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`differences` ranked by cause (module docstring), each with `named_by` (the checks that mention it) and
    `why` (its tier, in words)."""
    problems = [r for r in results if r.get("status") in ("error", "fail")] + \
               [r for r in results if r.get("status") == "warn"]
    names = [(index, r["id"], r.get("status"), set(r.get("names") or ())) for index, r in enumerate(problems)]
    key_rank = {key: i for i, key in enumerate(KEY_ROWS)}
    ranked = []
    for position, row in enumerate(differences):
        key = (row["section"], row["field"])
        row_names = _row_names(*key)
        named = [(index, check, status) for index, check, status, mentioned in names if row_names & mentioned]
        if key in CONSEQUENCES:
            tier, first = 4, 0
        elif named:
            tier, first = (0 if named[0][2] in ("error", "fail") else 1), named[0][0]
        elif key in key_rank:
            tier, first = 2, 0
        else:
            tier, first = 3, 0
        ranked.append(((tier, first, key_rank.get(key, len(key_rank)), position),
                       {**row, "named_by": [check for _, check, _ in named], "why": TIERS[tier]}))
    return [row for _, row in sorted(ranked, key=lambda pair: pair[0])]


def drift(before: Mapping[str, Any], after: Mapping[str, Any], base: Optional[Mapping[str, Any]] = None,
          every_check: bool = False) -> dict[str, Any]:
    """What changed from the digest `before` to the digest `after`: the fact rows that differ, ranked by cause,
    and the checks whose recorded verdict changed (`every_check`: every check both recorded, as `tfdoctor
    diff` lists them). `base` describes the earlier report (id, status, time)."""
    differences, same = row_differences(list(before.get("rows") or ()), list(after.get("rows") or ()))
    verdicts_before = {r["id"]: r for r in before.get("results") or ()}
    checks = [{"id": r["id"], "title": r["title"], "a": verdicts_before[r["id"]]["status"], "b": r["status"],
               "a_summary": verdicts_before[r["id"]]["summary"], "b_summary": r["summary"]}
              for r in after.get("results") or () if r["id"] in verdicts_before
              and (every_check or verdicts_before[r["id"]]["status"] != r["status"])]
    return {"base": dict(base or {}), "differences": rank(differences, list(after.get("results") or ())),
            "same_fields": same, "checks": checks}
