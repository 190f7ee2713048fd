"""Unmet Requires-Dist pins repaired: one install intent per pin, as the metadata writes it (the reader of the
pins is facts/requires_dist.py; this is what the dependencies, tensorflow-import and keras checks ask for)."""

from __future__ import annotations

from tfdoctor.facts.requires_dist import Unmet
from tfdoctor.results.repairs import Repair


def install_repairs(unmet: list[Unmet]) -> tuple[Repair, ...]:
    """One install intent per unmet pin, as the metadata writes it, each naming its requirer (and carrying
    it as `required_by`, so a plan that replaces that release drops the pin); pins only another TensorFlow
    satisfies are left out (the dependencies check decides those). The planner joins the specifiers of one
    distribution and reports requirers that disagree as a conflict."""
    return tuple(Repair.install(f"{item.name}{item.specifier}", reason=item.describe(),
                                required_by=f"{item.requirer}=={item.requirer_version}" if item.requirer_version else None)
                 for item in unmet if not item.moves_tensorflow)
