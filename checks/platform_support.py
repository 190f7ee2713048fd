"""Platform supported by TensorFlow. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("platform-support", "Platform supported by TensorFlow", needs=('host', 'os', 'python'), platforms=())
def platform_support(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
