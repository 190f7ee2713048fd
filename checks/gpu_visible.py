"""GPU visible to TensorFlow. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("gpu-visible", "GPU visible to TensorFlow", needs=('tensorflow',), platforms=())
def gpu_visible(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
