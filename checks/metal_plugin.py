"""Metal plugin (tensorflow-metal). PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("metal-plugin", "Metal plugin (tensorflow-metal)", needs=('python', 'distributions'), platforms=('Darwin',))
def metal_plugin(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
