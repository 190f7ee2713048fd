"""TensorFlow distributions. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("tensorflow-install", "TensorFlow distributions", needs=('python', 'distributions'), platforms=())
def tensorflow_install(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
