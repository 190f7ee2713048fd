"""`tfdoctor diff A.json B.json`: what differs between two machines — the "works on my machine" answer.

Both reports' facts are compared field by field (platform, Python, TensorFlow, GPU, every package,
the allowlisted environment), and both are diagnosed again with today's checks, so the statuses
compare like with like even when the reports came from different tfdoctor versions.
Exit code: 0 when nothing differs, 1 when something does, 2 when a file is not a readable report.
This module compares only; tfdoctor/render/diff.py puts the comparison into words.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator, Mapping

from tfdoctor._version import __version__
from tfdoctor.facts import Facts, section
from tfdoctor.facts.tensorflow_distributions import tensorflow_version
from tfdoctor.report.document import ReportDocument
from tfdoctor.report.saved import SavedReport

Row = tuple[str, str, Any]  # section, field, value
MISSING = "not recorded"
WHOLE_SECTION = "(recorded)"  # the field standing for a list section that one report lacks entirely


def _sw_vers_version(text: str | None) -> str | None:
    match = re.search(r"^ProductVersion:\s*(\S+)", text or "", re.MULTILINE)
    return match.group(1) if match else None


def _gib(value: Any) -> str | None:
    return f"{value / 1024 ** 3:.1f} GiB" if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _platform(facts: Facts) -> Iterator[Row]:
    host, os_facts, sysctl = section(facts, "host"), section(facts, "os"), section(facts, "sysctl")
    system = host.get("system")
    name = None
    if system == "Darwin":
        version = _sw_vers_version(os_facts.get("sw_vers"))
        name = f"macOS {version}" if version else "macOS"
    elif system == "Linux":
        name = section(os_facts, "os_release").get("PRETTY_NAME") or "Linux"
    elif system == "Windows":
        windows = section(os_facts, "windows")
        name = " ".join(str(v) for v in ("Windows", windows.get("release"), windows.get("version")) if v)
    yield "platform", "Operating system", name or system
    yield "platform", "Kernel", host.get("release")
    yield "platform", "Machine", host.get("machine")
    proc_version = os_facts.get("proc_version")
    if isinstance(proc_version, str):
        yield "platform", "WSL", "yes" if "microsoft" in proc_version.lower() else "no"
    yield "platform", "glibc", os_facts.get("glibc")
    yield "platform", "CPU", section(facts, "cpu").get("brand") or sysctl.get("machdep.cpu.brand_string")
    memory = _gib(section(facts, "memory").get("total_bytes"))
    if memory is None and str(sysctl.get("hw.memsize") or "").isdigit():
        memory = _gib(int(sysctl["hw.memsize"]))
    yield "platform", "Memory", memory


def _python(facts: Facts) -> Iterator[Row]:
    from tfdoctor.environment import installers  # the installer's label only: not what its pip can do (costly)

    python = section(facts, "python")
    yield "python", "Python", python.get("version")
    yield "python", "Implementation", python.get("implementation")
    yield "python", "Python architecture", python.get("machine")
    translated = {"1": "translated (Rosetta)", "0": "native"}.get(str(python.get("proc_translated")))
    if translated:
        yield "python", "Rosetta", translated
    yield "python", "Environment", installers.detect(python).label if python else None
    yield "python", "Executable", python.get("executable")


def _devices(devices: Any) -> str | None:
    if not isinstance(devices, list):
        return None
    counts: dict[str, int] = {}
    for device in devices:
        kind = str(device.get("device_type") if isinstance(device, dict) else device)
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{kind} × {n}" for kind, n in sorted(counts.items())) or "none"


def _tensorflow(facts: Facts) -> Iterator[Row]:
    tf = section(facts, "tensorflow")
    build = section(tf, "build_info")
    yield "tensorflow", "TensorFlow import", tf.get("status")
    # what `import tensorflow` loaded, else the installed build of any name (tensorflow-cpu, tensorflow-macos,
    # tf-nightly): an import that failed does not make an installed TensorFlow "not recorded"
    yield "tensorflow", "TensorFlow version", tf.get("version") or tensorflow_version(facts)
    yield "tensorflow", "Devices", _devices(tf.get("devices"))
    yield "tensorflow", "Built for CUDA", build.get("cuda_version")
    yield "tensorflow", "Built for cuDNN", build.get("cudnn_version")


def _nvidia(facts: Facts) -> Iterator[Row]:
    if not isinstance(facts.get("nvidia"), Mapping):
        return
    try:  # provided by the Linux checks; a saved report must still diff if it cannot be read
        from tfdoctor.facts.nvidia_smi import detected_gpus

        gpus = detected_gpus(facts)
    except Exception:  # noqa: BLE001
        return
    yield "gpu", "NVIDIA GPUs", ", ".join(str(g.get("name")) for g in gpus) or "none"
    yield "gpu", "NVIDIA driver", ", ".join(sorted({str(g.get("driver_version")) for g in gpus})) or None
    yield "gpu", "Driver's CUDA", ", ".join(sorted({str(g.get("cuda_version")) for g in gpus})) or None


def _packages(facts: Facts) -> Iterator[Row]:
    if not isinstance(facts.get("distributions"), list):
        yield "packages", WHOLE_SECTION, None
        return
    versions: dict[str, list[str]] = {}
    for dist in facts["distributions"]:
        versions.setdefault(str(dist.get("name")), []).append(str(dist.get("version")))
    for name in sorted(versions):
        yield "packages", name, " + ".join(versions[name])  # two copies installed: both show


def _environment(facts: Facts) -> Iterator[Row]:
    if not isinstance(facts.get("environment"), Mapping):
        yield "environment", WHOLE_SECTION, None
        return
    for name, value in sorted(section(facts, "environment").items()):
        yield "environment", str(name), value


SECTIONS: tuple[tuple[str, str, Callable[[Facts], Iterator[Row]]], ...] = (
    ("platform", "Platform", _platform),
    ("python", "Python", _python),
    ("tensorflow", "TensorFlow", _tensorflow),
    ("gpu", "GPU", _nvidia),
    ("packages", "Packages", _packages),
    ("environment", "Environment", _environment),
)
SECTION_TITLES = {key: title for key, title, _ in SECTIONS}


def _rows(facts: Facts) -> dict[tuple[str, str], Any]:
    rows: dict[tuple[str, str], Any] = {}
    for _, _, produce in SECTIONS:
        for part, field, value in produce(facts):
            rows[(part, field)] = value
    return rows


def _whole_sections(rows_a: dict[tuple[str, str], Any], rows_b: dict[tuple[str, str], Any]) -> None:
    """A list section one report lacks is one row ('56 recorded' / 'not recorded'), not one per item."""
    for part in {p for p, f in (*rows_a, *rows_b) if f == WHOLE_SECTION}:
        for rows in (rows_a, rows_b):
            items = [key for key in rows if key[0] == part and key[1] != WHOLE_SECTION]
            if (part, WHOLE_SECTION) not in rows:
                rows[(part, WHOLE_SECTION)] = f"{len(items)} recorded"
            for key in items:
                del rows[key]


# In a list section a report did record, a missing item is an absence, not a gap in the record.
ABSENT = {"packages": "not installed", "environment": "not set"}


def _value(rows: dict[tuple[str, str], Any], key: tuple[str, str]) -> Any:
    if key in rows:
        return rows[key]
    part = key[0]
    return ABSENT[part] if part in ABSENT and (part, WHOLE_SECTION) not in rows else None


def fact_rows(facts: Facts) -> list[list[Any]]:
    """The facts as the rows a comparison reads, [section, field, value] (JSON-ready: the team server keeps
    them beside each report, so a drift is computed without reading the report again)."""
    return [[part, field, value] for (part, field), value in _rows(facts).items()]


def row_differences(rows_a: list[list[Any]], rows_b: list[list[Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows that differ between two reports' `fact_rows`, in section order, and how many are the same."""
    keyed_a = {(part, field): value for part, field, value in rows_a}
    keyed_b = {(part, field): value for part, field, value in rows_b}
    _whole_sections(keyed_a, keyed_b)
    keys = list(keyed_a) + [k for k in keyed_b if k not in keyed_a]
    order = {key: i for i, (key, _, _) in enumerate(SECTIONS)}
    keys.sort(key=lambda k: order.get(k[0], len(order)))  # stable: fields keep their order within a section
    value_a, value_b = (lambda key: _value(keyed_a, key)), (lambda key: _value(keyed_b, key))
    differences = [
        {"section": part, "field": field, "a": value_a((part, field)), "b": value_b((part, field))}
        for part, field in keys
        if value_a((part, field)) != value_b((part, field))
    ]
    return differences, len(keys) - len(differences)


def compare(a: SavedReport, b: SavedReport, judged_a: ReportDocument, judged_b: ReportDocument,
            redacted: bool = True) -> dict[str, Any]:
    """The diff document of two saved reports, given today's checks on each (`judged_a`, `judged_b`: the explain
    operation's documents); not yet redacted: the caller does that, as for reports."""
    differences, same_fields = row_differences(fact_rows(a.facts), fact_rows(b.facts))
    results_a = {r["id"]: r for r in judged_a.results}
    results_b = {r["id"]: r for r in judged_b.results}
    checks = [
        {"id": cid, "title": results_a[cid]["title"], "a": results_a[cid]["status"], "b": results_b[cid]["status"],
         "a_summary": results_a[cid]["summary"], "b_summary": results_b[cid]["summary"]}
        for cid in results_a
    ]
    changed = [c for c in checks if c["a"] != c["b"]]
    return {
        "tool": {"name": "tfdoctor", "version": __version__},
        "redacted": redacted,
        "reports": {"a": a.source_info(), "b": b.source_info()},
        "identical": not differences and not changed,
        "differences": differences,
        "same_fields": same_fields,
        "checks": checks,
    }


def exit_code(document: Mapping[str, Any]) -> int:
    return 0 if document.get("identical") else 1
