"""Python runs natively (not under Rosetta). PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("architecture", "Python runs natively (not under Rosetta)", needs=('host', 'python', 'sysctl'), platforms=('Darwin',))
def architecture(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
