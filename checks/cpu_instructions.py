"""CPU instruction set. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("cpu-instructions", "CPU instruction set", needs=('cpu',), platforms=())
def cpu_instructions(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
