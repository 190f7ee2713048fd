"""GPU vs CPU speed probe. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("probe", "GPU vs CPU speed probe", needs=('tensorflow',), platforms=())
def probe(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
