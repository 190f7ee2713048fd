"""The tf-keras every check asks for when tf.keras needs the tf-keras of the installed TensorFlow: one
install intent, built from facts/made_for.py's answer (advice lives here, facts only read)."""

from __future__ import annotations

from tfdoctor.facts import Facts
from tfdoctor.facts.made_for import tf_keras_requirement
from tfdoctor.results.repairs import Repair


def tf_keras_repairs(facts: Facts, reason: str) -> tuple[Repair, ...]:
    """The one install intent every check asks for when tf.keras needs the tf-keras of this TensorFlow.
    No --no-deps here: the planner knows from the companion table whether the release requires a
    TensorFlow build other than the installed one, and installs it without dependencies then."""
    wanted = tf_keras_requirement(facts)
    return (Repair.install(wanted, reason=reason),) if wanted else ()
