"""Which tensorflow-metal loads into which TensorFlow (knowledge/macos.toml `metal_release`, `metal_tf`), the
one to install beside a TensorFlow, and the newest TensorFlow + tensorflow-metal pair for a Python on Apple
silicon (`gpu_combo`). Pure lookups.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.facts.installable_wheels import Row, covers_minor, install_name, wheel_rows, within
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.knowledge.versions import release

FILE = "macos"

def metal_release(version: Optional[str]) -> Optional[Row]:
    wanted = release(version)
    for row in knowledge_rows(FILE, "metal_release"):
        if release(row["version"]) == wanted:
            return row
    return None


def metal_versions() -> list[str]:
    return [row["version"] for row in knowledge_rows(FILE, "metal_release")]


def metal_supports_python(row: Row, python: Optional[str], machine: str = "arm64") -> bool:
    top = row["python_max"] if machine != "x86_64" else row["x86_64_python_max"]
    return bool(top) and within(python, row["python_min"], top)


# What a pairing's outcome means for `import tensorflow` and for a hint. The outcome says how far the
# pair gets; whether it *imports* is a separate question: 0.7.x in TF 2.11 imports (only model.fit
# with the new optimizers fails), so "no tensorflow-metal loads into 2.11" would be false.
IMPORTS = frozenset({"loads", "loads_untested", "training_fails", "crashes_in_use"})
# Outcomes a hint may install: works, or imports with a known workaround (the legacy optimizers).
RECOMMENDABLE = ("loads", "training_fails")


def imports(pairing: Optional[Row]) -> bool:
    return pairing is not None and bool(pairing) and pairing["outcome"] in IMPORTS


def _for_build(row: Row, tf_distribution: Optional[str]) -> bool:
    """Does a metal_tf row apply to this TensorFlow build? Rows without `tf_distributions` apply to
    every build; a row naming builds applies only when the build is known to be one of them."""
    wanted = row.get("tf_distributions") or ""
    return not wanted or bool(tf_distribution) and tf_distribution in wanted.split()


def metal_pairing(metal: Optional[str], tf: Optional[str], tf_distribution: Optional[str] = None) -> Optional[Row]:
    """How `metal` behaves inside TensorFlow `tf` built as `tf_distribution` (the real build that
    `import tensorflow` loads: tensorflow, tensorflow-macos...), first matching row; None when nobody knows."""
    for row in knowledge_rows(FILE, "metal_tf"):
        if within(metal, row["metal_min"], row["metal_max"]) and within(tf, row["tf_min"], row["tf_max"]) \
                and _for_build(row, tf_distribution):
            return row
    return None


def built_for(metal: Optional[str]) -> Optional[str]:
    """The TensorFlow build an early tensorflow-metal was made for ('tensorflow-macos' for 0.1-0.6)."""
    for row in knowledge_rows(FILE, "metal_tf"):
        if row.get("built_for") and within(metal, row["metal_min"], row["metal_max"]):
            return row["built_for"]
    return None


def metal_choice(tf: Optional[str], python: Optional[str], macos: Optional[str] = None,
                 tf_distribution: Optional[str] = None) -> Optional[tuple[str, Row]]:
    """(version, pairing row) of the tensorflow-metal to install next to `tf`: it imports there, has a
    wheel for `python` and Apple supports it on `macos`. A pairing that works beats one that imports
    with a caveat (training_fails: the row's `why` says what to do); then Apple's own pairing (1.0.1
    for TF 2.13, not the also-working 1.1.0); then the newest."""
    candidates = []
    for version in metal_versions():
        pairing = metal_pairing(version, tf, tf_distribution)
        if not pairing or pairing["outcome"] not in RECOMMENDABLE:
            continue
        row = metal_release(version)
        if macos and row and not within(macos, row["macos_min"], None):
            continue
        if row and (python is None or metal_supports_python(row, python)):
            rank = (pairing["outcome"] == "loads", bool(pairing["official"]), release(version))
            candidates.append((rank, version, pairing))
    if not candidates:
        return None
    _, version, pairing = max(candidates, key=lambda item: item[0])
    return version, pairing


def metal_for(tf: Optional[str], python: Optional[str], macos: Optional[str] = None,
              tf_distribution: Optional[str] = None) -> Optional[str]:
    """The version of metal_choice(): the tensorflow-metal that loads into `tf` on this Python."""
    choice = metal_choice(tf, python, macos, tf_distribution)
    return choice[0] if choice else None


def newest_metal() -> str:
    return max(metal_versions(), key=release)


def newest_metal_python() -> str:
    """The newest CPython with any tensorflow-metal wheel."""
    return max((row["python_max"] for row in knowledge_rows(FILE, "metal_release")), key=release)


def newest_x86_64_metal() -> Optional[str]:
    found = [row["version"] for row in knowledge_rows(FILE, "metal_release") if row["x86_64_python_max"]]
    return max(found, key=release) if found else None


def gpu_combo(python: Optional[str], macos: Optional[str] = None) -> Optional[dict[str, str]]:
    """The newest TensorFlow + tensorflow-metal pair that installs and loads for this Python on
    Apple silicon: {'tf': '2.19', 'tf_name': 'tensorflow', 'metal': '1.2.0'}."""
    minors = sorted({release(row["newest"])[:2] for row in wheel_rows("macos-arm64") if not row["prerelease"]},
                    reverse=True)
    for parts in minors:
        minor = ".".join(map(str, parts))
        name = install_name("macos-arm64", minor)
        if not name:
            continue
        takes_python = any(
            within(python, row["python_min"], row["python_max"])
            and (not macos or not row["macos_min"] or within(macos, row["macos_min"], None))
            and covers_minor(row, minor)
            for row in wheel_rows("macos-arm64", name))
        metal = metal_for(minor, python, macos) if takes_python else None
        if metal:
            return {"tf": minor, "tf_name": name, "metal": metal}
    return None
