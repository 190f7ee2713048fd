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
        return _shim_target_left_out(facts)
    build, _, version = pin.partition("==")
    return build, version


def _shim_target_left_out(facts: Facts) -> Optional[tuple[str, str]]:
    """A partial list (a saved or hand-written report) naming only a shim (Windows' `tensorflow` 2.18 for
    tensorflow-intel) while TensorFlow imported or was not tried: the shim's real build, at the shim's version, is
    the TensorFlow there (the shim requires exactly it), as tensorflow-install notes rather than fails (issue 29)."""
    from tfdoctor.facts import section, tensorflow_distributions

    tf = section(facts, "tensorflow")
    if requires_dist.complete_record(facts) or (tf and not tf.get("imported")):
        return None
    shims = [c for c in tensorflow_distributions.tensorflow_copies(facts) if not c.real and c.shim_of and c.version]
    return (canonical_name(str(shims[0].shim_of)), str(shims[0].version)) if shims else None


def knows_releases(name: str, via_extras: bool = False) -> bool:
    """Does the companion table say which TensorFlow each release of this distribution is made for (a
    companion whose metadata names a TensorFlow build; with `via_extras`, also one that names it only in an
    extra, as tensorflow-io's `tensorflow<2.17,>=2.16 ; extra == 'tensorflow'` says which TensorFlow its native
    ops are built for)? False for any other distribution, and for companions that declare none (keras,
    tensorboard...): there "no release made for it" is unknown."""
    name = canonical_name(name)
    if name not in companions.COMPANIONS:
        return False
    return companions.declares_tensorflow(name) or (via_extras and name not in companions.DECLARED_BY_TENSORFLOW
                                                    and companions.fit_basis(name, via_extras=True) == "extras")


def release_for(facts: Facts, name: str, via_extras: bool = False) -> Optional[CompanionRelease]:
    """The newest release of companion `name` made for the installed TensorFlow on this target (markers
    evaluated for it); None when the table has none, or the name is no companion. `via_extras`: as in
    `knows_releases`, the lines of an extra answer where nothing outside extras names a TensorFlow."""
    installed = installed_tensorflow(facts)
    if installed is None or not knows_releases(name, via_extras):
        return None
    return companions.release_for(canonical_name(name), installed[1], requires_dist.marker_environment(facts),
                                  via_extras=via_extras)


def made_but_not_installable(facts: Facts, name: str) -> list[CompanionRelease]:
    """The releases of companion `name` made for the installed TensorFlow, when none of them has a wheel for this
    target's platform and Python (tensorflow-text for TensorFlow 2.16 on Windows); [] when one installs here, when
    the table knows none made for it, or when the target's platform or Python is not recorded (nothing is claimed)."""
    installed = installed_tensorflow(facts)
    if installed is None or not knows_releases(name):
        return []
    environment = requires_dist.marker_environment(facts)
    made = [r for r in companions.releases(canonical_name(name)) if r.fits(installed[1], environment) is True]
    return made if made and all(r.installs_on(environment) is False for r in made) else []


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


def in_step_requirement(facts: Facts, name: str) -> Optional[tuple[str, Optional[str]]]:
    """('tensorboard~=2.21.0', its release's source): the release line of a distribution released in step with
    TensorFlow (tensorboard, whose metadata names no TensorFlow: TensorFlow up to 2.20 required `tensorboard~=2.20.0`
    itself), when the companion table holds a release of the installed TensorFlow's minor that installs here; else
    the bare name (pip picks the newest), with no source. None when no TensorFlow is installed."""
    installed = installed_tensorflow(facts)
    version = requires_dist.version_of(installed[1]) if installed else None
    if version is None:
        return None
    environment = requires_dist.marker_environment(facts)
    for release in companions.releases(name):
        made = requires_dist.version_of(release.version)
        if made is not None and made.release[:2] == version.release[:2] and not made.is_prerelease \
                and release.installs_on(environment) is not False:
            return f"{canonical_name(name)}~={version.major}.{version.minor}.0", release.source
    return canonical_name(name), None
