"""A report with the TensorFlow child's facts taken out, judged again (issue 38, build 1).

A saved report often lacks what the child records: an older tfdoctor's has no `tensorflow.companions` or
`tensorflow.keras`, one pasted into a ticket or encoded from a thread has no `tensorflow` section at all. Every rule
that reads the child's import facts has a path through the generated tables from the distributions alone, so such a
report must reach the verdict the full one reaches wherever the tables know the releases. Shared by the fast test
on recorded runs (tests/core/test_stripped_reports.py) and the live suite, which strips every report its own
environments produce (tests/live/support.py, `check_stripped`, called by `run_doctor`).
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

# What the child records about imports beyond TensorFlow's own: an older report has neither.
OLDER_REPORT_LACKS = ("companions", "keras")
# Facts only children gather: the TensorFlow child and the offline experiments run after the checks.
CHILD_SECTIONS = ("tensorflow", "experiments")
# Checks whose verdict is an observation of the TensorFlow child itself (did it import, which devices, how fast): a
# report without the child has nothing for them to judge, and no table stands in for them.
CHILD_ONLY_CHECKS = ("tensorflow-import", "gpu-visible", "probe", "workload")
LEVELS = ("older-report", "no-child")
# Checks whose rules read the child's import facts (the companions' imports, the tf.keras record, whether TensorFlow
# imported): each has a path from the distributions alone through the generated tables (issue 38).
IMPORT_FACT_CHECKS = ("dependencies", "keras", "companions")


def stripped(document: Mapping[str, Any], level: str) -> dict[str, Any]:
    """A copy of a report document (or fixture) without the child's facts: "older-report" drops the companions'
    imports and the tf.keras record, and the experiments; "no-child" drops the whole `tensorflow` section too."""
    if level not in LEVELS:
        raise ValueError(f"no strip level {level!r}: {LEVELS}")
    document = copy.deepcopy(dict(document))
    facts = document["facts"]
    facts.pop("experiments", None)
    if level == "no-child":
        facts.pop("tensorflow", None)
    elif isinstance(facts.get("tensorflow"), dict):
        for key in OLDER_REPORT_LACKS:
            facts["tensorflow"].pop(key, None)
    return document


def diagnosed(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document `tfdoctor explain` makes of a report (or fixture): today's checks, one plan."""
    from tfdoctor.operations.explain import explained_document
    from tfdoctor.report.saved import _saved_report

    saved = _saved_report({"schema_version": document.get("schema_version") or "1.0", "facts": document["facts"]},
                          "stripped")
    return explained_document(saved, redacted=False)


def statuses(document: Mapping[str, Any]) -> dict[str, str]:
    return {result["id"]: result["status"] for result in document["results"]}


def plan_commands(document: Mapping[str, Any]) -> list[str]:
    return [step["command"] for step in (document.get("plan") or {}).get("steps") or ()]


def repairs(document: Mapping[str, Any], check_ids: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """What these checks' remediations ask to change together, as comparable tuples (the words of their reasons
    aside): one check may name what another names with the child's facts (tensorflow-text's recorded pin: the
    dependencies check's without the import, the companions check's with it), and the plan merges them."""
    wanted = [r for r in document["results"] if r["id"] in check_ids]
    return sorted({(r.get("action"), tuple(r.get("packages") or ()), r.get("variable"), r.get("value"))
                   for result in wanted for r in (result.get("remediation") or {}).get("repairs") or ()})


def differences(full: Mapping[str, Any], without: Mapping[str, Any], level: str,
                beyond_tables: tuple[str, ...] = (), scope: tuple[str, ...] = ()) -> list[str]:
    """How the verdict on the stripped report differs from the full one's, in words (empty: the same).

    The same status per check, except: a check that only observes the child (no-child level); a check the full
    report skipped because the child never reached it (TensorFlow did not import), which the tables may judge (a
    failure too, where the full report's import failed: tf.keras then fails with it); and
    `dependencies` failing where the full report warned, at the no-child level: without a tried import a declared
    incompatibility stands, as `pip check` says (a tried import that works is what makes it a warning).
    `beyond_tables`: checks whose full verdict rests on what no table holds (a keras.json, a traced function, a
    variable proven by experiment); the stripped report may not know it, but must not invent a problem there either.
    The plan must be the same whenever no check is beyond the tables. `scope`: only these checks are compared,
    each by its status and its repairs, not the whole plan (a report whose other checks rest on what the child alone
    observes: its devices, its logs)."""
    found: list[str] = []
    before, after = statuses(full), statuses(without)
    for check_id, status in before.items():
        if scope and check_id not in scope:
            continue
        now = after.get(check_id, "missing")
        if now == status or (level == "no-child" and check_id in CHILD_ONLY_CHECKS):
            continue
        if status == "skip" and now in ("pass", "skip"):
            continue
        if status == "skip" and now == "fail" and before.get("tensorflow-import") == "fail":
            continue  # the child never reached it, as TensorFlow did not import: what uses TensorFlow fails as well
        if level == "no-child" and check_id == "dependencies" and (status, now) == ("warn", "fail"):
            continue
        if check_id in beyond_tables and now in ("pass", "skip"):
            continue
        found.append(f"{check_id}: {status} with the child's facts, {now} without ({level})")
    compared = tuple(c for c in scope if c not in beyond_tables)
    if scope and repairs(full, compared) != repairs(without, compared):
        found.append(f"repairs of {', '.join(compared)} ({level}): {repairs(full, compared)} with the child's facts, "
                     f"{repairs(without, compared)} without")
    if not scope and not beyond_tables and plan_commands(full) != plan_commands(without):
        found.append(f"plan ({level}): {plan_commands(full)} with the child's facts, {plan_commands(without)} without")
    return found


def unknown_to_the_tables(document: Mapping[str, Any]) -> list[str]:
    """The installed releases of this report the generated tables do not hold (empty: they know them all): the
    TensorFlow build's (releases.toml) and each companion's with a release table (companions.toml). Where a release
    is unknown the stripped verdict may lawfully be a skip; the comparison is for reports the tables know."""
    from tfdoctor.facts import canonical_name, made_for, releases
    from tfdoctor.facts import companions as companions_table

    facts = document["facts"]
    unknown = []
    installed = made_for.installed_tensorflow(facts)
    if installed is not None and not any(canonical_name(str(row["distribution"])) == installed[0]
                                         and row["version"] == installed[1] for row in releases.wheels()):
        unknown.append(f"{installed[0]} {installed[1]}")
    for entry in facts.get("distributions") or ():
        name = canonical_name(str(entry.get("name") or ""))
        if name in companions_table.COMPANIONS and name not in companions_table.DECLARED_BY_TENSORFLOW:
            known = companions_table.releases(name)
            if known and not any(r.version == entry.get("version") for r in known):
                unknown.append(f"{name} {entry.get('version')}")
    return unknown


def live_differences(report: Mapping[str, Any], beyond_tables: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(differences, releases the tables lack) between a live run's report and the same report stripped of the
    child's facts, at both levels, in the checks whose rules read the child's import facts (their statuses and
    repairs); nothing is compared where the tables lack an installed release. The live suite calls it on every
    report it makes (tests/live/support.py, `check_stripped`)."""
    unknown = unknown_to_the_tables(report)
    if unknown:
        return [], unknown
    found: list[str] = []
    for level in LEVELS:
        found += differences(report, diagnosed(stripped(report, level)), level, beyond_tables, scope=IMPORT_FACT_CHECKS)
    return found, []
