"""Memory and swap. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("memory", "Memory and swap", needs=('memory',), platforms=())
def memory(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
