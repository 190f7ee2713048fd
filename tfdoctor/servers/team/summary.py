"""What the fleet table shows of one report, read from the report itself (pure: no I/O, no server deps).

The status is the worst result the machine saw; the cause is the first failing (else warning) check's
one-line summary, and the first step is the first command of the report's own repair plan; the key facts
are the ones that decide whether TensorFlow works: Python, TensorFlow, CUDA, cuDNN, NumPy, Keras, driver.

Every verdict the server shows or stores is computed by `summarize` alone (issue 36 gives the report
document its own verdict; this one function is what it replaces).
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from tfdoctor.facts import installed_version, section
from tfdoctor.facts.tensorflow_distributions import tensorflow_version

STATUS_ORDER = ("error", "fail", "warn", "pass", "skip")  # worst first
STATUS_RANK = {status: rank for rank, status in enumerate(STATUS_ORDER)}
FAILING = ("error", "fail")

# The key facts, in the order a drift view lists them; the names match `tfdoctor diff`'s fields.
KEY_FACTS = ("TensorFlow", "CUDA", "cuDNN", "NumPy", "Keras", "Driver", "Python", "GPU")
DIFF_FIELDS_FIRST = ("TensorFlow version", "Built for CUDA", "Built for cuDNN", "numpy", "keras", "tf-keras",
                     "NVIDIA driver", "Driver's CUDA", "Python version", "TensorFlow import", "Devices")


def worst_status(results: Any) -> str:
    statuses = [r.get("status") for r in results or () if isinstance(r, Mapping)]
    ranked = [s for s in statuses if s in STATUS_RANK and s != "skip"]
    return min(ranked, key=STATUS_RANK.__getitem__) if ranked else "pass"


def first_failing_check(results: Any) -> str | None:
    """The first check that failed or crashed, else the first that warned."""
    for wanted in (FAILING, ("warn",)):
        for result in results or ():
            if isinstance(result, Mapping) and result.get("status") in wanted:
                return str(result.get("id"))
    return None


def _gpu(facts: Mapping[str, Any]) -> str | None:
    if isinstance(facts.get("nvidia"), Mapping):
        try:  # a report is untrusted: one that cannot be read still gets a row
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


def _driver(facts: Mapping[str, Any]) -> str | None:
    if not isinstance(facts.get("nvidia"), Mapping):
        return None
    try:
        from tfdoctor.facts.nvidia_smi import detected_gpus

        versions = sorted({str(g.get("driver_version")) for g in detected_gpus(facts) if g.get("driver_version")})
    except Exception:  # noqa: BLE001
        return None
    return ", ".join(versions) or None


def key_facts(document: Mapping[str, Any]) -> dict[str, str | None]:
    facts = document.get("facts") if isinstance(document.get("facts"), Mapping) else {}
    tensorflow = section(facts, "tensorflow")
    build = section(tensorflow, "build_info")
    python = section(facts, "python")

    def text(value: Any) -> str | None:
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


CAUSE_CHARS = 300
STEP_CHARS = 500


def _one_line(value: Any, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    line = " ".join(value.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _first_step(document: Mapping[str, Any]) -> str | None:
    """The first command of the report's repair plan (as the doctor spelt it for that machine)."""
    plan = document.get("plan") if isinstance(document.get("plan"), Mapping) else {}
    for step in plan.get("steps") or ():
        if isinstance(step, Mapping) and step.get("command"):
            return _one_line(step.get("command"), STEP_CHARS)
    return None


def summarize(document: Mapping[str, Any]) -> dict[str, Any]:
    """The verdict stored beside a report: status, the first failing check and its one-line cause (with a key
    that machines failing for the same reason share), the plan's first step, counts per status, key facts,
    each check's status."""
    results = document.get("results") if isinstance(document.get("results"), list) else []
    target = document.get("target") if isinstance(document.get("target"), Mapping) else {}
    python_facts = section(document.get("facts") or {}, "python")
    failing = first_failing_check(results)
    problem = next((r for r in results if isinstance(r, Mapping) and str(r.get("id")) == failing), None)
    cause = _one_line(problem.get("summary"), CAUSE_CHARS) if problem is not None else None
    totals = {status: 0 for status in STATUS_ORDER}
    for result in results:
        if isinstance(result, Mapping) and result.get("status") in totals:
            totals[result["status"]] += 1
    return {
        "status": worst_status(results),
        "first_failing_check": failing,
        "cause": cause,
        "cause_key": hashlib.sha256(f"{failing}\n{cause}".encode("utf-8")).hexdigest()[:16] if failing else None,
        "first_step": _first_step(document) if failing else None,
        "totals": totals,
        "python": str(target.get("python") or python_facts.get("executable") or "not recorded")[:500],
        "key_facts": key_facts(document),
        "checks": {str(r.get("id")): str(r.get("status")) for r in results if isinstance(r, Mapping)},
    }


def diff_rows_first(differences: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """`tfdoctor diff`'s rows with the ones that matter first (TensorFlow, CUDA, cuDNN, NumPy, Keras, driver,
    Python), then the rest in their order."""
    rank = {name: i for i, name in enumerate(DIFF_FIELDS_FIRST)}
    return sorted(differences, key=lambda row: rank.get(str(row.get("field")), len(rank)))
