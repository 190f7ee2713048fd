"""Declared dependencies: the Requires-Dist of the TensorFlow family and of every distribution that
requires one of them, against what is installed, with markers evaluated for the target interpreter.

The environment's own metadata says what each release needs, in any release: no table to go stale.
An unmet pin fails when `import tensorflow` fails (or tf.keras, for a Keras pin; or NumPy past the ABI
TensorFlow was built for), and warns while TensorFlow imports and works. The fix is one install
command that satisfies every unmet pin together, with the specifiers as the metadata writes them,
and keeps TensorFlow where it is; a dependent made for another TensorFlow is moved to the release
made for the installed one when its versions follow TensorFlow's, else TensorFlow moves (and the
advice says why).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from tfdoctor.facts import requirements, section, tfchild
from tfdoctor.facts import macos_knowledge as mk
from tfdoctor.facts.requirements import Unmet
from tfdoctor.installers import Installer, installer_for
from tfdoctor.model import Outcome, Remediation
from tfdoctor.registry import Facts, check

PIP_URL = "https://pip.pypa.io/en/stable/topics/dependency-resolution/"
KERAS_NAMES = ("keras", "tf-keras")
SHOWN = 3  # unmet pins named in the summary's details before "and N more" (all of them with -v evidence)


def _import_state(facts: Facts) -> tuple[Optional[bool], Optional[str]]:
    """(does TensorFlow import, the fate in words): None when the child did not run."""
    tf = facts.get("tensorflow")
    if not isinstance(tf, Mapping) or tf.get("status") == "not_installed":
        return None, None
    if tf.get("imported"):
        return True, None
    return False, f"`import tensorflow` {tfchild.fate(tf)}"


def _keras_error(facts: Facts) -> Optional[str]:
    keras = section(facts, "tensorflow").get("keras")
    if isinstance(keras, Mapping) and keras.get("error") and not keras.get("layer_ok"):
        error = keras["error"]
        text = error.get("message") if isinstance(error, Mapping) else error
        return f"tf.keras fails: {tfchild.first_line(text, 160)}"
    return None


def _known_to_break(item: Unmet, tf_version: Optional[str], keras_error: Optional[str]) -> Optional[str]:
    """Why this pin breaks TensorFlow even where the import was not tried or works; None when not known."""
    if keras_error and (item.name in KERAS_NAMES or item.requirer in KERAS_NAMES):
        return keras_error
    if item.name == "numpy" and item.installed and tf_version:
        abi = mk.numpy_major_max(tf_version)
        major = requirements.version_of(item.installed)
        if abi and major is not None and major.major > abi["numpy_major_max"]:
            return (f"TensorFlow {tf_version} is built for NumPy {abi['numpy_major_max']}.x: its extensions fail "
                    f"to import under NumPy {major.major}")
    return None


def _tracks_tensorflow(item: Unmet) -> bool:
    """The requirer's releases follow TensorFlow's minor (tf-keras 2.15.x, tensorflow-text 2.15.x need
    TensorFlow 2.15): the release made for another TensorFlow is the same minor as that TensorFlow."""
    mine = requirements.version_of(item.requirer_version)
    try:
        bounds = [requirements.version_of(s.version.rstrip(".*")) for s in SpecifierSet(item.specifier)
                  if s.operator in (">=", "~=", "==")]
    except InvalidSpecifier:
        return False
    return mine is not None and any(b is not None and b.release[:2] == mine.release[:2] for b in bounds)


def _needs_only_tensorflow(facts: Facts, name: str) -> bool:
    """Every Requires-Dist line of this distribution that applies names a TensorFlow build."""
    entry = requirements.first_copy(facts, name) or {}
    lines = [requirements.parse(line) for line in entry.get("requires") or ()]
    return bool(lines) and all(req is not None and (requirements.is_tensorflow_build(req.name) or req.marker is not None
                                                    and "extra" in str(req.marker)) for req in lines)


def _minor(version: Optional[str]) -> Optional[str]:
    parsed = requirements.version_of(version)
    return f"{parsed.major}.{parsed.minor}" if parsed else None


def _moving_fix(facts: Facts, installer: Installer, unmet: list[Unmet], repair: tuple[str, ...]) -> Remediation:
    """A dependent made for another TensorFlow: keep TensorFlow and install the dependent's release of the
    same minor when its versions follow TensorFlow's; otherwise the only fix the metadata knows is to
    move TensorFlow into the dependent's range (said in the advice, with the alternative)."""
    moving = [u for u in unmet if u.moves_tensorflow]
    pin = requirements.tensorflow_pin(facts)
    tf_name, _, tf_version = (pin or "").partition("==")
    others = [r for r in repair if r != pin]
    tracked = [u for u in moving if _tracks_tensorflow(u)]
    minor = _minor(tf_version)
    if tf_version and minor and len(tracked) == len(moving):
        wanted = [f"{u.requirer}=={minor}.*" for u in dict((u.requirer, u) for u in moving).values()]
        switching = [u for u in moving if u.provided_by]
        if switching and all(_needs_only_tensorflow(facts, u.requirer) for u in moving):
            # Its only requirement is TensorFlow, which the installed build provides under another name:
            # without --no-deps pip would add `tensorflow` next to it (two builds in one tensorflow/).
            commands = (installer.install("--no-deps", *wanted),)
            advice = (f"Install the release of {', '.join(sorted({u.requirer for u in moving}))} made for TensorFlow "
                      f"{minor}, without its dependencies: it requires only `{switching[0].name}`, which {tf_name} "
                      f"{tf_version} provides under another name (pip would install a second TensorFlow build).")
            if others:
                commands += (installer.install(*others, pin),)
        elif switching:
            # pip does not count tensorflow-cpu as `tensorflow`: it would install a second build next to it.
            needed = switching[0].name
            commands = (installer.uninstall(tf_name), installer.install(f"{needed}=={tf_version}", *wanted, *others))
            advice = (f"{', '.join(sorted({u.requirer for u in moving}))} require the `{needed}` distribution, which "
                      f"pip does not see in {tf_name}: replace {tf_name} by {needed} {tf_version} (the same TensorFlow) "
                      f"and install the release of each made for TensorFlow {minor}.")
        else:
            commands = (installer.install(*wanted, *others, pin),)
            advice = (f"Install the release of {', '.join(sorted({u.requirer for u in moving}))} made for TensorFlow "
                      f"{minor}, keeping TensorFlow {tf_version} where it is. Or, if no such release exists yet, "
                      f"move TensorFlow to what they need instead: "
                      f"{installer.install(*(u.name + u.specifier for u in moving))}")
        return Remediation(advice, commands, PIP_URL)
    targets = list(dict.fromkeys(u.name + u.specifier for u in moving))
    keep = [f"{u.requirer}=={u.requirer_version}" for u in moving if u.requirer_version]
    # The TensorFlow that moves brings its own pins: only the other requirers' unmet pins stay in the command.
    others = [r for r in requirements.repair_requirements(
        facts, [u for u in unmet if not requirements.is_tensorflow_build(u.requirer)]) if r != pin]
    commands: tuple[str, ...] = ()
    names = {u.name for u in moving}
    if tf_name and tf_name not in names:
        commands += (installer.uninstall(tf_name),)  # another build is wanted: never two in one tensorflow/
    commands += (installer.install(*targets, *dict.fromkeys(keep), *others),)
    who = ", ".join(f"{u.requirer} {u.requirer_version}" for u in moving)
    advice = (f"{who} {'declares' if len(moving) == 1 else 'declare'} {', '.join(targets)}: only another TensorFlow "
              f"satisfies {'it' if len(moving) == 1 else 'them'}, so the command moves TensorFlow"
              + (f" from {tf_name} {tf_version}" if tf_name else "") + ". Or keep TensorFlow and install a release of "
              f"{', '.join(sorted({u.requirer for u in moving}))} made for it, if one exists.")
    return Remediation(advice, commands, PIP_URL)


def _clash_advice(unmet: list[Unmet]) -> str:
    """Requirers that disagree on one distribution: no install satisfies both; say who has to move."""
    parts = []
    for name, items in requirements.clashing(unmet).items():
        wants = " but ".join(f"{i.requirer} {i.requirer_version} needs {name}{i.specifier}" for i in items)
        parts.append(f"{wants}: no {name} satisfies both, so one of them has to move (upgrade the one made for "
                     f"an older {name}, or uninstall it).")
    return " ".join(parts)


def _remediation(facts: Facts, unmet: list[Unmet]) -> Remediation:
    installer = installer_for(facts)
    repair = requirements.repair_requirements(facts, unmet)
    moving = [u for u in unmet if u.moves_tensorflow]
    clash = _clash_advice(unmet)
    if moving:
        fix = _moving_fix(facts, installer, unmet, repair)
        return Remediation(f"{fix.advice} {clash}".strip(), fix.commands, fix.url)
    pin = requirements.tensorflow_pin(facts)
    keep = f", keeping {pin.replace('==', ' ')} where it is" if pin else ""
    advice = (f"Install what the metadata declares, every unmet pin in one command so the resolver satisfies "
              f"them together{keep}." if repair else "")
    commands = (installer.install(*repair),) if repair else ()
    return Remediation(f"{advice} {clash}".strip(), commands, PIP_URL)


def _who(entries: list[Mapping[str, Any]]) -> str:
    names = [f"{e.get('name')} {e.get('version')}" for e in entries]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


@check("dependencies", "Declared dependencies (Requires-Dist)", needs=("python", "distributions"),
       uses=("tensorflow",), tags=("install",))
def dependencies(facts: Facts) -> Outcome:
    declaring = requirements.requirers(facts)
    if not declaring:
        if requirements.family_recorded(facts):
            return Outcome.skip("Requires-Dist of the TensorFlow distributions was not recorded in this report")
        return Outcome.skip("no TensorFlow-family distribution is installed (see tensorflow-install)")
    unmet = requirements.unmet_requirements(facts)
    environment = requirements.marker_environment(facts)
    evidence: dict[str, Any] = {
        "requirers": [f"{e.get('name')} {e.get('version')}" for e in declaring],
        "marker_environment": {k: environment.get(k) for k in ("python_version", "sys_platform", "platform_machine")},
        "unmet": [{"requirer": u.requirer, "requirement": u.requirement, "name": u.name, "specifier": u.specifier,
                   "installed": u.installed, "extra": u.extra} for u in unmet],
    }
    if not unmet:
        partial = () if requirements.complete_record(facts) else (
            "This report lists only some distributions: a required one it does not list was not judged.",)
        return Outcome.ok(f"Every pin declared by {_who(declaring)} holds",
                          f"Markers evaluated for Python {environment.get('python_version')} on "
                          f"{environment.get('sys_platform')} {environment.get('platform_machine')}.", *partial,
                          **evidence)

    imports, fate = _import_state(facts)
    tf_version = requirements.tensorflow_pin(facts)
    tf_version = tf_version.partition("==")[2] if tf_version else None
    keras_error = _keras_error(facts)
    broken = [(u, why) for u in unmet for why in [_known_to_break(u, tf_version, keras_error)] if why]
    failing = imports is False or bool(broken)

    first = unmet[0] if not broken else broken[0][0]
    more = f" (and {len(unmet) - 1} more unmet pin{'s' if len(unmet) > 2 else ''})" if len(unmet) > 1 else ""
    details = [u.describe() for u in unmet if u is not first][:SHOWN]
    if len(unmet) - 1 > SHOWN:
        details.append(f"... {len(unmet) - 1 - SHOWN} more in the evidence (-v, --json)")
    if imports is False:
        details.insert(0, f"{fate}: these pins are the environment's own explanation")
    elif broken:
        details.insert(0, broken[0][1])
    elif imports:
        details.insert(0, "TensorFlow imports and works for now; code that reaches these packages may not")
    else:
        details.insert(0, "The TensorFlow import was not tried in this run")
    fix = _remediation(facts, unmet)
    summary = first.describe() + more
    if failing:
        return Outcome.fail(summary, *details, fix=fix, **evidence)
    return Outcome.warn(summary, *details, fix=fix, **evidence)
