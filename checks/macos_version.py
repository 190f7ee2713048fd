"""macOS version. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("macos-version", "macOS version", needs=('os',), platforms=('Darwin',))
def macos_version(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
