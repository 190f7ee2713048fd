"""An import error tied to its cause, with one repair that fixes all of it (the reader of what the error names
and what explains it is facts/import_causes.py): missing or altered files reinstalled as they were, unmet pins
installed as the metadata writes them. Shared by the tensorflow-import and keras checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from tfdoctor.facts import Facts, integrity, published_requires
from tfdoctor.facts.import_causes import Explaining, what_explains
from tfdoctor.remedies.integrity import REINSTALL_URL, clash_fix, reinstall_fix, this_python_fix
from tfdoctor.remedies.requires_dist import install_repairs
from tfdoctor.results.model import Remediation
from tfdoctor.results.repairs import Repair

DEPENDENCIES_CHECK = "dependencies"
INTEGRITY_CHECK = "install-integrity"
INSTALL_CHECK = "tensorflow-install"
PIP_URL = "https://pip.pypa.io/en/stable/cli/pip_install/"


@dataclass(frozen=True)
class Cause:
    """What explains an import error: the check whose finding it is, one line, and the repair."""

    check: str  # DEPENDENCIES_CHECK | INTEGRITY_CHECK | both, joined by " and "
    summary: str
    details: tuple[str, ...]
    fix: Remediation
    distributions: tuple[str, ...]  # the distributions the error named and the cause concerns
    named: bool  # the error itself names them (False: the environment has a problem the error does not name)


def import_error_cause(facts: Facts, error: Optional[Mapping[str, Any]], extra_text: str = "",
            broad: bool = True) -> Optional[Cause]:
    """The finding of another check that explains this error, with one repair that fixes all of it.

    Named causes first: missing or altered files of a distribution the error names (or of the library it
    could not open), and pins violated by a distribution it names. With `broad`, an error that names
    none of them is still tied to pins the environment violates (the import failed and the environment's
    own metadata says it is inconsistent: repairing that comes first). None when nothing explains it."""
    # a saved report without Requires-Dist is judged on the release's published pins, as the dependencies check does
    facts = published_requires.with_published(facts)[0]
    found = what_explains(facts, error, extra_text)
    damaged, unmet, named_unmet = list(found.damaged), list(found.unmet), list(found.named_unmet)
    foreign = _foreign_cause(found, broad and not damaged and not named_unmet and not unmet)
    if foreign is not None:
        return foreign
    if not damaged and not named_unmet and not (broad and unmet):
        return None
    repairs: list[Repair] = []
    lines: list[str] = []
    checks: list[str] = []
    advice: list[str] = []
    if damaged:
        reinstall = reinstall_fix(facts, damaged)
        repairs += list(reinstall.repairs if reinstall else ())
        lines += [f"{p.distribution} {p.version}: {p.describe()} (RECORD)" for p in damaged[:3]]
        checks.append(INTEGRITY_CHECK)
        clash = integrity.clashing(damaged)
        if reinstall:
            advice.append(reinstall.advice)
        if clash:  # a reinstall of either would overwrite the other again: keep one (tensorflow-install)
            repairs += list(clash_fix(facts, damaged, "").repairs)
            advice.append(f"{', '.join(sorted(clash))} write the same files: keep one of them (see "
                          "tensorflow-install), not a reinstall.")
    if named_unmet or (unmet and (broad or damaged)):
        repairs += list(install_repairs(unmet))
        lines += [u.describe() for u in unmet[:4]]
        if len(unmet) > 4:
            lines.append(f"and {len(unmet) - 4} more unmet pins (see {DEPENDENCIES_CHECK})")
        checks.append(DEPENDENCIES_CHECK)
        advice.append("Install what the metadata declares, every unmet pin in one command (TensorFlow stays "
                      "where it is).")
    first = damaged[0].describe() if damaged else (named_unmet or unmet)[0].describe()
    blamed = [p.distribution for p in damaged] + [u.name for u in (named_unmet or unmet)]
    return Cause(
        check=" and ".join(checks),
        summary=first,
        details=tuple(lines),
        fix=Remediation(" ".join(advice), url=REINSTALL_URL if damaged else PIP_URL, repairs=tuple(repairs)),
        distributions=tuple(dict.fromkeys(blamed)),
        named=bool(damaged or named_unmet),
    )


def _foreign_cause(found: Explaining, broad: bool) -> Optional[Cause]:
    """Files built for another Python (their WHEEL tags): the cause when the error names such a distribution
    (TensorFlow itself: 'undefined symbol: _PyObject_ClearManagedDict' in its _pywrap_ module), or, with `broad`,
    when nothing else explains the error. No installed file is damaged and no pin is broken, so no other reader
    sees it; the repair reinstalls every foreign build at its release for this Python."""
    blamed = list(found.named_foreign) or (list(found.foreign) if broad else [])
    if not blamed:
        return None
    fix = this_python_fix(list(found.foreign))
    if fix is None:
        return None
    return Cause(check=INSTALL_CHECK, summary=blamed[0].describe(),
                 details=tuple(build.describe() for build in found.foreign[:4]), fix=fix,
                 distributions=tuple(build.name for build in blamed), named=bool(found.named_foreign))
