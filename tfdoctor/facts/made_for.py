"""Which release of a TensorFlow companion (tf-keras, tensorflow-text, ...) is made for the installed
TensorFlow, offline, from the generated companion table (tfdoctor/facts/companions.py). The TensorFlow
is the installed build as its metadata says (never tf.__version__, which a nightly spells differently).
Shared by the checks that ask for a companion, so they ask for the same release.
"""

from __future__ import annotations

from typing import Optional

from tfdoctor.facts import Facts, canonical_name, companions, requires_dist
from tfdoctor.facts.companions import CompanionRelease


def installed_tensorflow(facts: Facts) -> Optional[tuple[str, str]]:
    """(build, version) of the TensorFlow `import tensorflow` loads, from its distribution's metadata."""
    pin = requires_dist.tensorflow_pin(facts)
    if not pin:
        return None
    build, _, version = pin.partition("==")
    return build, version


def knows_releases(name: str) -> bool:
    """Does the companion table say which TensorFlow each release of this distribution is made for (a
    companion whose metadata names a TensorFlow build)? False for any other distribution, and for
    companions that declare none (keras, tensorboard...): there "no release made for it" is unknown."""
    return canonical_name(name) in companions.COMPANIONS and companions.declares_tensorflow(canonical_name(name))


def release_for(facts: Facts, name: str) -> Optional[CompanionRelease]:
    """The newest release of companion `name` made for the installed TensorFlow on this target (markers
    evaluated for it); None when the table has none, or the name is no companion."""
    installed = installed_tensorflow(facts)
    if installed is None or not knows_releases(name):
        return None
    return companions.release_for(canonical_name(name), installed[1], requires_dist.marker_environment(facts))


def tf_keras_requirement(facts: Facts) -> Optional[str]:
    """'tf-keras==2.21.0': the tf-keras release made for the installed TensorFlow; where the table knows
    none (a TensorFlow newer than it), the release line of the same minor, as tf-keras follows TensorFlow's
    ('tf-keras~=2.22.0')."""
    release = release_for(facts, "tf-keras")
    if release is not None:
        return f"tf-keras=={release.version}"
    installed = installed_tensorflow(facts)
    version = requires_dist.version_of(installed[1]) if installed else None
    return f"tf-keras~={version.major}.{version.minor}.0" if version else None
