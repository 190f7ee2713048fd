"""TensorFlow CUDA build. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("cuda-build", "TensorFlow CUDA build", needs=('distributions', 'nvidia'), platforms=('Linux',))
def cuda_build(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
