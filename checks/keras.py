"""tf.keras as users reach it: the Keras that `tf.keras` resolved to in the TensorFlow child (Keras 3,
tf-keras under TF_USE_LEGACY_KERAS, the Keras 2 of TensorFlow <= 2.15, or the copy built into old
releases), its version, and one `tf.keras.layers.Dense(2)` built and called there.

TensorFlow imports fine while tf.keras fails (a tf-keras of another release, a missing one, a Keras that
violates TensorFlow's pin), so this is the check that turns such a report from all-pass into a fail.
A failure is tied to its cause the way an import error is (remedies/import_causes.py): a violated
Requires-Dist pin or a damaged install of a distribution the error names.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from packaging.version import InvalidVersion, Version

from tfdoctor.checking.registry import Facts, check
from tfdoctor.environment.pip import installer_for
from tfdoctor.facts import signatures, tensorflow_child, tensorflow_distributions
from tfdoctor.remedies import experiments as experiment_remedies, import_causes
from tfdoctor.remedies.requires_dist import install_repairs
from tfdoctor.remedies.signatures import remediation_for
from tfdoctor.remedies.tf_keras import tf_keras_repairs
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation

LEGACY_VARIABLE = "TF_USE_LEGACY_KERAS"
# TensorFlow 2.16 made Keras 3 the tf.keras and routes it to tf_keras when TF_USE_LEGACY_KERAS is set.
LEGACY_FROM = (2, 16)
LEGACY_URL = "https://github.com/tensorflow/tensorflow/releases/tag/v2.16.1"
KERAS_URL = "https://keras.io/getting_started/"
FLAVOR_NAMES = {"keras3": "Keras 3", "tf-keras": "tf-keras", "keras2": "Keras 2", "builtin": "TensorFlow's built-in Keras"}


def minor_of(version: Any) -> Optional[tuple[int, int]]:
    try:
        release = Version(str(version)).release
    except (InvalidVersion, TypeError):
        return None
    return (release[0], (release + (0,))[1]) if release else None


def matching_tf_keras(tf_version: Any) -> Optional[str]:
    """'tf-keras~=2.16.0' for TensorFlow 2.16.x: tf-keras is released in step with TensorFlow."""
    minor = minor_of(tf_version)
    return f"tf-keras~={minor[0]}.{minor[1]}.0" if minor else None


@check("keras", "tf.keras builds a layer",
       uses=("tensorflow", "python", "distributions", "environment", "integrity", "installers", "experiments", "os"))
def keras(facts: Facts) -> Outcome:
    """`tf.keras` resolves to the right Keras and builds a `Dense(2)` layer

    `tf.keras` as user code reaches it, in the same child: which Keras it resolves to (Keras 3, tf-keras under
    `TF_USE_LEGACY_KERAS`, the Keras 2 of TensorFlow <= 2.15), its version, and one `Dense(2)` layer built and
    called; a missing tf-keras or one of another release is repaired with the tf-keras made for the installed
    TensorFlow (the same repair tensorflow-install asks for; the plan installs it `--no-deps` beside tensorflow-cpu,
    whose `tensorflow` it requires). A report without the child's facts is judged from the tables (issue 38)
    """
    tf = facts.get("tensorflow")
    if not isinstance(tf, Mapping) or not tf:  # a report without the child's facts: the tables judge (issue 38)
        return _from_tables(facts, "not recorded: tensorflow")
    if tf.get("status") == "not_installed":
        return Outcome.skip("TensorFlow is not installed (see tensorflow-install)")
    if not tf.get("imported"):
        return Outcome.skip("TensorFlow did not import (see tensorflow-import)")
    record = tf.get("keras")
    tf_version = tf.get("version") or tensorflow_distributions.tensorflow_version(facts)
    if not record:
        if tf.get("status") != "ok":
            return Outcome.skip(f"the TensorFlow child {tensorflow_child.fate(tf)} before it tried tf.keras "
                                "(see gpu-visible and probe)")
        return _from_tables(facts, "tf.keras was not recorded (a report from a tfdoctor that did not try it)")
    if record.get("error") or not record.get("layer_ok"):
        return _failed(facts, tf, record, tf_version)
    return _works(facts, record, tf_version)


def _from_tables(facts: Facts, why: str) -> Outcome:
    """tf.keras judged from the installed distributions alone (a saved report without the child's record):
    the TensorFlow release's own keras pin (its Requires-Dist, else the release table's), TF_USE_LEGACY_KERAS as
    the report recorded the environment, and tf-keras's release. What only a built layer shows (a keras.json
    naming another backend, a damaged file) stays unknown: the verdict says it was judged from the tables."""
    from tfdoctor.facts import published_requires, requires_dist, tensorflow_pins

    tf_version = tensorflow_distributions.tensorflow_version(facts)
    tf_minor = minor_of(tf_version)
    if tf_version is None or tf_minor is None:
        return Outcome.skip(why)
    legacy = tensorflow_pins.legacy_keras()
    variable = (facts.get("environment") or {}).get(legacy["variable"]) if isinstance(
        facts.get("environment"), Mapping) else None
    requested = tf_minor >= LEGACY_FROM and str(variable or "") in legacy["true_values"]
    note = f"Judged from the installed distributions and the release tables: {why}."
    evidence: dict[str, Any] = {"judged": "tables", "tensorflow": tf_version}
    legacy_cause = _legacy_cause(facts, {"legacy_requested": requested}, tf_version)
    if legacy_cause:
        summary, fix = legacy_cause
        return Outcome.fail(f"tf.keras fails: {summary}", note, fix=fix, cause="tf-keras", **evidence)
    tf_keras = tensorflow_distributions.first_version(facts, "tf-keras")
    if requested:
        record = {"flavor": "tf-keras", "version": tf_keras, "legacy_env": variable}
    else:
        # tf.keras is the keras package (2.16 and later, and Keras 2 releases beside 2.6-2.15): a release outside
        # every series TensorFlow's own pin admits is another API, and tf.keras breaks (the dependencies check's rule)
        published = published_requires.with_published(facts)[0]
        broken = [u for u in requires_dist.unmet_requirements(published)
                  if u.name == "keras" and requires_dist.is_tensorflow_build(u.requirer) and u.installed
                  and requires_dist.admits_series(u.specifier, u.installed) is False]
        if broken:
            item = broken[0]
            unmet = [u for u in requires_dist.unmet_requirements(published) if not u.moves_tensorflow]
            installed = requires_dist.version_of(item.installed)
            series = requires_dist.series_of(installed) if installed is not None else item.installed
            summary = (f"tf.keras fails: {item.requirer} {item.requirer_version} takes tf.keras from the keras package, "
                       f"and its pin ({item.specifier}) admits no Keras {series} (keras {item.installed} is installed; "
                       "see dependencies)")
            fix = Remediation("Install what the metadata declares, every unmet pin in one command (TensorFlow stays "
                              "where it is).", url=KERAS_URL, repairs=install_repairs(unmet))
            return Outcome.fail(summary, note, fix=fix, explained_by="dependencies", cause=["keras"], **evidence)
    loaded = _closure_broken(facts, tf_version, note, evidence)
    if loaded is not None:
        return loaded
    if not requested:
        keras_version = tensorflow_distributions.first_version(facts, "keras")
        keras_major = requires_dist.version_of(keras_version)
        if keras_major is None:
            return Outcome.skip(why)  # the list does not say which Keras tf.keras would be
        record = {"flavor": "keras3" if keras_major.major >= 3 else "keras2", "version": keras_version}
    outcome = _works(facts, record, tf_version)
    summary = f"tf.keras is {describe(record)} (judged from the installed distributions; no layer was built)"
    return Outcome(outcome.status, summary if outcome.status.value == "pass" else outcome.summary,
                   tuple(outcome.details) + (note,), outcome.remediation, {**dict(outcome.evidence or {}), **evidence})


def _closure_broken(facts: Facts, tf_version: str, note: str, evidence: Mapping[str, Any]) -> Optional[Outcome]:
    """tf.keras fails where a pin in what it loads is violated (keras -> optree -> typing-extensions: the Requires-Dist
    closure of the distribution tf.keras is), as the child sees it fail (the live closure case): the declared
    incompatibility stands where tf.keras was not tried, the dependencies check's rule. None when every pin there
    holds. TensorFlow's own pins, and those of what its import loads, are the dependencies check's."""
    from tfdoctor.facts import published_requires, requires_dist, tensorflow_pins

    tf_keras = tensorflow_pins.tf_keras_distribution(tf_version, facts.get("environment"))
    published = published_requires.with_published(facts)[0]
    loaded = requires_dist.reached_from(published, tf_keras)
    # what `import tensorflow` itself loads (ml-dtypes, numpy, protobuf) is the import's, judged by dependencies
    unmet = [u for u in requires_dist.unmet_requirements(published)
             if u.requirer in loaded and not requires_dist.is_tensorflow_build(u.requirer) and not u.moves_tensorflow
             and tensorflow_pins.import_time_dependency(u.requirer) is None]
    if not unmet:
        return None
    item = unmet[0]
    summary = (f"tf.keras fails: {item.describe()}, which tf.keras loads through {tf_keras} (judged from the "
               "installed distributions; see dependencies)")
    fix = Remediation("Install what the metadata declares, every unmet pin in one command (TensorFlow stays where "
                      "it is).", url=KERAS_URL, repairs=install_repairs(unmet))
    return Outcome.fail(summary, note, *[u.describe() for u in unmet[1:]], fix=fix, explained_by="dependencies",
                        cause=list(dict.fromkeys(u.name for u in unmet)), **evidence)


def describe(record: Mapping[str, Any]) -> str:
    name = FLAVOR_NAMES.get(str(record.get("flavor")), str(record.get("flavor") or "an unknown Keras"))
    version = record.get("version")
    if record.get("flavor") == "tf-keras":
        return f"tf-keras {version or '?'}"
    return f"{name} ({version})" if version and record.get("flavor") != "builtin" else name


def _works(facts: Facts, record: Mapping[str, Any], tf_version: Any) -> Outcome:
    findings = Findings()
    wanted = matching_tf_keras(tf_version)
    if record.get("flavor") == "tf-keras" and wanted and minor_of(record.get("version")) != minor_of(tf_version):
        findings.warn(f"tf.keras is tf-keras {record.get('version')}, made for another TensorFlow than {tf_version}",
                      "tf-keras is released in step with TensorFlow; a Dense layer builds, but other parts may not.",
                      fix=Remediation(f"Install the tf-keras of TensorFlow {tf_version}.", url=KERAS_URL,
                                      repairs=tf_keras_repairs(facts, f"tf.keras is tf-keras "
                                                                        f"{record.get('version')}, made for another "
                                                                        f"TensorFlow than {tf_version}")))
    installed = tensorflow_distributions.first_version(facts, "tf-keras")
    tf_minor = minor_of(tf_version)
    if (record.get("flavor") != "tf-keras" and installed and wanted and tf_minor and tf_minor >= LEGACY_FROM
            and minor_of(installed) != tf_minor):
        findings.warn(f"tf-keras {installed} is installed, made for another TensorFlow than {tf_version}",
                      f"tf.keras is {describe(record)} here, but code that imports tf_keras, or runs with "
                      f"{LEGACY_VARIABLE}=1, gets a tf-keras that does not fit this TensorFlow.",
                      fix=Remediation(f"Install the tf-keras of TensorFlow {tf_version} (or uninstall tf-keras if "
                                      "nothing uses it).", url=LEGACY_URL,
                                      repairs=tf_keras_repairs(facts, f"tf-keras {installed} is made for "
                                                                        f"another TensorFlow than {tf_version}")))
    if record.get("legacy_env") is not None:
        findings.note(f"{LEGACY_VARIABLE}={record.get('legacy_env')}")
    seconds = record.get("seconds")
    took = f" in {seconds:.2f} s" if isinstance(seconds, (int, float)) else ""
    return findings.outcome(f"tf.keras is {describe(record)}: Dense(2) built and called{took}",
                            flavor=record.get("flavor"), version=record.get("version"), module=record.get("module"),
                            judged="import")


def _legacy_cause(facts: Facts, record: Mapping[str, Any], tf_version: Any) -> Optional[tuple[str, Remediation]]:
    """TF_USE_LEGACY_KERAS routes tf.keras to tf_keras: missing, or of another TensorFlow release."""
    tf_minor = minor_of(tf_version)
    if not record.get("legacy_requested") or not tf_minor or tf_minor < LEGACY_FROM:
        return None
    installed = tensorflow_distributions.first_version(facts, "tf-keras")
    unset = f"Or unset {LEGACY_VARIABLE} to use Keras 3 instead."
    if not installed:
        summary = f"{LEGACY_VARIABLE} is set but tf-keras is not installed"
        return (summary, Remediation(f"{LEGACY_VARIABLE} makes tf.keras the tf_keras package: install the tf-keras "
                                     f"of TensorFlow {tf_version}. {unset}", url=LEGACY_URL,
                                     repairs=tf_keras_repairs(facts, summary)))
    if minor_of(installed) != tf_minor:
        summary = f"tf-keras {installed} is made for another TensorFlow than {tf_version} ({LEGACY_VARIABLE} is set)"
        return (summary, Remediation(f"tf-keras is released in step with TensorFlow: install the tf-keras of "
                                     f"TensorFlow {tf_version}. {unset}", url=LEGACY_URL,
                                     repairs=tf_keras_repairs(facts, summary)))
    return None


def _failed(facts: Facts, tf: Mapping[str, Any], record: Mapping[str, Any], tf_version: Any) -> Outcome:
    error = record.get("error")
    step = "resolving tf.keras" if record.get("step") == "resolve" else "building a Dense(2) layer"
    if error:
        what = (f"tf.keras failed ({step}): {tensorflow_child.short_type(error.get('type'))}: "
                f"{tensorflow_child.first_line(error.get('message'))}")
    elif tf.get("status") != "ok" and tensorflow_child.phase_of(tf.get("stage")) == "keras":
        what = f"tf.keras: the TensorFlow child {tensorflow_child.fate(tf)} while {step}"
    else:
        what = "tf.keras.layers.Dense(2) did not give a (1, 2) output for a (1, 3) input"
    details = [f"tf.keras resolved to {describe(record)} ({record.get('module')})"] if record.get("module") else []
    if error:
        details.insert(0, f"error: {error.get('type')}: {tensorflow_child.first_line(error.get('message'), 300)}")
    short = f"tf.keras fails ({step})" if error else what
    if record.get("legacy_env") is not None:
        details.append(f"{LEGACY_VARIABLE}={record.get('legacy_env')}")
    evidence: dict[str, Any] = {"flavor": record.get("flavor"), "version": record.get("version"),
                                "step": record.get("step"), "error": error, "judged": "import"}
    legacy = _legacy_cause(facts, record, tf_version)
    if legacy:
        summary, fix = legacy
        evidence["cause"] = "tf-keras"
        return Outcome.fail(f"{short}: {summary}", *details, fix=fix, **evidence)
    stderr = tf.get("stderr_tail") or ""
    cause = import_causes.import_error_cause(facts, error, stderr if not error else "")
    if cause:
        evidence.update(explained_by=cause.check, cause=list(cause.distributions))
        details = [f"cause ({cause.check}): {line}" for line in cause.details] + details
        return Outcome.fail(f"{short}: {cause.summary} (see {cause.check})", *details, fix=cause.fix, **evidence)
    known = signatures.find({"exception": error}, tensorflow_child.installed_names(facts), phases=("import",)) if error else []
    if known:  # the same error texts break tf.keras as break the import (protobuf, NumPy ABI, ...)
        evidence["signatures"] = [m.signature.id for m in known]
        return Outcome.fail(f"{short}: {known[0].signature.summary}", *details,
                            fix=remediation_for(known[0], facts), **evidence)
    proven = experiment_remedies.proven_or_noted(facts, "keras", short, details, evidence)
    if proven is not None:  # the experiments ran because nothing above proved a cause
        return proven
    python = installer_for(facts).python
    python = f'"{python}"' if " " in python else python
    return Outcome.fail(what, *details, fix=Remediation(
        "Nothing in the environment's metadata explains it. The full traceback:",
        (f'{python} -c "import tensorflow as tf; tf.keras.layers.Dense(2)(tf.ones((1, 3)))"',), KERAS_URL), **evidence)
