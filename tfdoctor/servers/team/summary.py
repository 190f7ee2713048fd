"""What the fleet table shows of one report, read from the report itself (pure: no I/O, no server deps).

The status is the worst result the machine saw; the key facts are the ones that decide whether
TensorFlow works (the rows a drift view puts first): Python, TensorFlow, CUDA, cuDNN, NumPy, Keras, driver.
"""

from __future__ import annotations

from typing import Any, Mapping

from tfdoctor.facts import installed_version, section
from tfdoctor.report.document import FAILING, WORST_FIRST, Verdict  # noqa: F401 - FAILING: the store's

STATUS_ORDER = (*WORST_FIRST, "skip")  # worst first (the fleet table's order)

# The key facts, in the order a drift view lists them; the names match `tfdoctor diff`'s fields.
KEY_FACTS = ("TensorFlow", "CUDA", "cuDNN", "NumPy", "Keras", "Driver", "Python", "GPU")
DIFF_FIELDS_FIRST = ("TensorFlow version", "Built for CUDA", "Built for cuDNN", "numpy", "keras", "tf-keras",
                     "NVIDIA driver", "Driver's CUDA", "Python version", "TensorFlow import", "Devices")


def worst_status(results: Any) -> str:
    return Verdict.of(results if isinstance(results, list) else ()).status


def first_failing_check(results: Any) -> str | None:
    """The first check that failed or crashed, else the first that warned."""
    problem = Verdict.of(results if isinstance(results, list) else ()).first_problem
    return problem.check_id if problem is not None else None


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
        "TensorFlow": text(tensorflow.get("version") or installed_version(facts, "tensorflow")
                           or installed_version(facts, "tensorflow-cpu")),
        "CUDA": text(build.get("cuda_version")),
        "cuDNN": text(build.get("cudnn_version")),
        "NumPy": text(installed_version(facts, "numpy")),
        "Keras": text(installed_version(facts, "keras")),
        "Driver": text(_driver(facts)),
        "Python": text(python.get("version")),
        "GPU": text(_gpu(facts)),
    }


def summarize(document: Mapping[str, Any]) -> dict[str, Any]:
    """The columns stored beside a report: status, first failing check, key facts, each check's status."""
    results = document.get("results") if isinstance(document.get("results"), list) else []
    target = document.get("target") if isinstance(document.get("target"), Mapping) else {}
    python_facts = section(document.get("facts") or {}, "python")
    return {
        "status": worst_status(results),
        "first_failing_check": first_failing_check(results),
        "python": str(target.get("python") or python_facts.get("executable") or "not recorded")[:500],
        "key_facts": key_facts(document),
        "checks": {str(r.get("id")): str(r.get("status")) for r in results if isinstance(r, Mapping)},
    }


def diff_rows_first(differences: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """`tfdoctor diff`'s rows with the ones that matter first (TensorFlow, CUDA, cuDNN, NumPy, Keras, driver,
    Python), then the rest in their order."""
    rank = {name: i for i, name in enumerate(DIFF_FIELDS_FIRST)}
    return sorted(differences, key=lambda row: rank.get(str(row.get("field")), len(rank)))
