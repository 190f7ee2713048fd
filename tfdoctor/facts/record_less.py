"""Distributions installed without a RECORD (issue 29): `setup.py install`, a distro package, a tool that
copies files. pip cannot uninstall one ("Cannot uninstall X ... no RECORD file was found", "It is a
distutils installed project"), so no pip install that replaces it works; uv replaces it but leaves its
metadata behind, a second copy of the distribution's metadata. Pure functions of the facts: the target
child records `has_record` (RECORD, or installed-files.txt for an egg-info) for every distribution on
TensorFlow's Requires-Dist closure and the family.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name, first_copies

PIP_URL = "https://pip.pypa.io/en/stable/cli/pip_uninstall/"


def without_record(facts: Facts) -> dict[str, Mapping[str, Any]]:
    """name -> the first recorded copy of each distribution whose metadata has no RECORD (only where the
    report says so: older reports never recorded it)."""
    return {name: entry for name, entry in first_copies(facts).items()
            if entry.get("has_record") is False and entry.get("version")}


def replaced(facts: Facts, wanted: Mapping[str, Optional[str]]) -> list[Mapping[str, Any]]:
    """The RECORD-less distributions a plan replaces or removes: `wanted` maps each name the plan installs,
    reinstalls or uninstalls to the specifier it installs (None: removed or laid down again, always
    replaced). One whose installed version already satisfies the specifier is left alone by pip."""
    from tfdoctor.facts.requires_dist import holds

    found = []
    for name, entry in without_record(facts).items():
        if name not in wanted:
            continue
        specifier = wanted[name]
        if specifier is not None and holds(str(entry.get("version")), specifier):
            continue
        found.append(entry)
    return found


def reason(entry: Mapping[str, Any]) -> str:
    return (f"{entry.get('name')} {entry.get('version')} has no RECORD (installed by setup.py or another tool): "
            f"pip refuses to replace it, so its stale metadata goes first and the install lays the files over it")


def names(entries: Iterable[Mapping[str, Any]]) -> list[str]:
    return [canonical_name(str(e.get("name"))) for e in entries]
