"""TensorFlow imports. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("tensorflow-import", "TensorFlow imports", needs=('tensorflow',), platforms=())
def tensorflow_import(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
