"""`tfdoctor diff A.json B.json`: what differs between two machines — the "works on my machine" answer.

Both reports' facts are compared field by field (platform, Python, TensorFlow, GPU, every package,
the allowlisted environment), and both are diagnosed again with today's checks, so the statuses
compare like with like even when the reports came from different tfdoctor versions.
Exit code: 0 when nothing differs, 1 when something does, 2 when a file is not a readable report.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator, Mapping

from tfdoctor._version import __version__
from tfdoctor.saved_reports import SavedReport, explain
from tfdoctor.facts import Facts, installed_version, section
from tfdoctor.render.sanitize import clean_document, json_dumps

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
    from tfdoctor.environment.pip import installer_for

    python = section(facts, "python")
    yield "python", "Python", python.get("version")
    yield "python", "Implementation", python.get("implementation")
    yield "python", "Python architecture", python.get("machine")
    translated = {"1": "translated (Rosetta)", "0": "native"}.get(str(python.get("proc_translated")))
    if translated:
        yield "python", "Rosetta", translated
    yield "python", "Environment", installer_for(facts).label if python else None
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
    yield "tensorflow", "TensorFlow version", tf.get("version") or installed_version(facts, "tensorflow")
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


def compare(a: SavedReport, b: SavedReport, redacted: bool = True) -> dict[str, Any]:
    """The diff document (not yet redacted: the caller does that, as for reports)."""
    rows_a, rows_b = _rows(a.facts), _rows(b.facts)
    _whole_sections(rows_a, rows_b)
    keys = list(rows_a) + [k for k in rows_b if k not in rows_a]
    order = {key: i for i, (key, _, _) in enumerate(SECTIONS)}
    keys.sort(key=lambda k: order[k[0]])  # stable: fields keep their order within a section
    value_a, value_b = (lambda key: _value(rows_a, key)), (lambda key: _value(rows_b, key))
    differences = [
        {"section": part, "field": field, "a": value_a((part, field)), "b": value_b((part, field))}
        for part, field in keys
        if value_a((part, field)) != value_b((part, field))
    ]
    results_a = {r["id"]: r for r in explain(a)["results"]}
    results_b = {r["id"]: r for r in explain(b)["results"]}
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
        "same_fields": len(keys) - len(differences),
        "checks": checks,
    }


def exit_code(document: Mapping[str, Any]) -> int:
    return 0 if document.get("identical") else 1


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
    from tfdoctor.render.markdown import EMOJI, escape

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


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
