"""NVIDIA driver. PLACEHOLDER: being written."""

from __future__ import annotations

from tfdoctor.model import Outcome
from tfdoctor.registry import Facts, check


@check("nvidia-driver", "NVIDIA driver", needs=('nvidia',), platforms=('Linux', 'Windows'))
def nvidia_driver(facts: Facts) -> Outcome:
    return Outcome.skip("not implemented yet")
