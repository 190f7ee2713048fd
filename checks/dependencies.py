"""Declared dependencies: the Requires-Dist of the TensorFlow family and of every distribution that
requires one of them, against what is installed, with markers evaluated for the target interpreter.

The environment's own metadata says what each release needs, in any release: no table to go stale.
An unmet pin fails when `import tensorflow` fails (or tf.keras, for a Keras pin of another series; or NumPy past
the ABI TensorFlow was built for; or, where the import was not tried, a package TensorFlow's import itself loads
-- NumPy, ml-dtypes, protobuf -- outside every series its pin admits), and warns only while TensorFlow imports and
works. Where the import was not tried (a saved or partial report), any unmet pin fails, as `pip check` does: the
declaration is the only fact, and only a tried import can show the environment survives it. The fix is one install
intent per unmet pin, with the specifier as the metadata writes it and the requirer named: the planner
joins them into one step that keeps TensorFlow where it is, and reports requirers that disagree as a
conflict. A dependent made for another TensorFlow is moved to its release made for the installed one
(the companion table, offline); where none exists TensorFlow moves, and the reason says why. Where TensorFlow is
newer than the tables, their silence is no answer: the advice says so, and the move is left to the user's choices.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from tfdoctor.checking.registry import Facts, check
from tfdoctor.facts import (
    autograph,
    import_causes,
    knowledge_age,
    made_for,
    module_providers,
    owners,
    published_requires,
    requires_dist,
    section,
    tensorflow_child,
    tensorflow_pins,
    tested_locks,
)
from tfdoctor.facts.requires_dist import Unmet
from tfdoctor.remedies.requires_dist import install_repairs
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

PIP_URL = "https://pip.pypa.io/en/stable/topics/dependency-resolution/"
AUTOGRAPH_URL = "https://www.tensorflow.org/guide/function#autograph_transformations"
KERAS_NAMES = ("keras", "tf-keras")
SHOWN = 3  # unmet pins named in the summary's details before "and N more" (all of them with -v evidence)


def _import_state(facts: Facts) -> tuple[Optional[bool], Optional[str]]:
    """(does TensorFlow import, the fate in words): None when the child did not run."""
    tf = facts.get("tensorflow")
    if not isinstance(tf, Mapping) or tf.get("status") == "not_installed":
        return None, None
    if tf.get("imported"):
        return True, None
    return False, f"`import tensorflow` {tensorflow_child.fate(tf)}"


def _keras_error(facts: Facts) -> Optional[str]:
    keras = section(facts, "tensorflow").get("keras")
    if isinstance(keras, Mapping) and keras.get("error") and not keras.get("layer_ok"):
        error = keras["error"]
        text = error.get("message") if isinstance(error, Mapping) else error
        return f"tf.keras fails: {tensorflow_child.first_line(text, 160)}"
    return None


def _untried_keras(facts: Facts, imports: Optional[bool], tf_version: Optional[str]) -> frozenset[str]:
    """What tf.keras loads (its distribution's Requires-Dist closure), where TensorFlow imported but tf.keras was
    not tried (an older report: the child recorded no tf.keras): a pin violated there is untried, as where nothing
    was (issue 38: the live run's child shows tf.keras failing on optree's typing-extensions), unless its requirer is
    what `import tensorflow` itself loads (ml-dtypes: the tried import survived it). Empty otherwise."""
    if imports is not True or isinstance(section(facts, "tensorflow").get("keras"), Mapping):
        return frozenset()
    tf_keras = tensorflow_pins.tf_keras_distribution(tf_version, facts.get("environment"))
    return requires_dist.reached_from(facts, tf_keras)


def _known_to_break(item: Unmet, tf_version: Optional[str], keras_error: Optional[str],
                    imports: Optional[bool] = None, untried_keras: frozenset[str] = frozenset()) -> Optional[str]:
    """Why this pin breaks TensorFlow even where the import was not tried or works; None when not known."""
    if keras_error and (item.name in KERAS_NAMES or item.requirer in KERAS_NAMES):
        return keras_error
    if item.requirer in untried_keras and not requires_dist.is_tensorflow_build(item.requirer) \
            and tensorflow_pins.import_time_dependency(item.requirer) is None:  # the tried import loaded those
        return (f"tf.keras loads {item.requirer} {item.requirer_version} (the Requires-Dist of what it imports), and "
                "this pin of its is violated; tf.keras was not tried in this run: the declared incompatibility stands")
    tensorflow_pin = requires_dist.is_tensorflow_build(item.requirer) and bool(item.installed)
    installed = requires_dist.version_of(item.installed)
    if item.name == "keras" and tensorflow_pin and installed is not None and requires_dist.admits_series(item.specifier, item.installed) is False:
        series = requires_dist.series_of(installed)
        return (f"{item.requirer} {item.requirer_version} takes tf.keras from the keras package, and its pin "
                f"({item.specifier}) admits no Keras {series}: Keras {series} is another API, so tf.keras breaks")
    if item.name == "numpy" and item.installed and tf_version:
        abi = tensorflow_pins.numpy_major_max(tf_version)
        major = requires_dist.version_of(item.installed)
        if abi and major is not None and major.major > abi["numpy_major_max"]:
            return (f"TensorFlow {tf_version} is built for NumPy {abi['numpy_major_max']}.x: its extensions fail "
                    f"to import under NumPy {major.major}")
    # issue 29: a package `import tensorflow` itself loads (its own source says so), outside every series its
    # pin admits, breaks the import; only where the import was not tried: a tried import's fate is the fact
    loaded = tensorflow_pins.import_time_dependency(item.name) if tensorflow_pin else None
    if loaded and imports is None and installed is not None and requires_dist.admits_series(item.specifier, item.installed) is False:
        series = requires_dist.series_of(installed)
        return (f"`import tensorflow` loads {item.name} itself ({loaded['source'].split()[0]}), and "
                f"{item.requirer} {item.requirer_version}'s pin ({item.specifier}) admits no {item.name} {series}: "
                f"{item.name} {item.installed} breaks the import (it was not tried in this run)")
    return None


def _moving_fix(facts: Facts, moving: list[Unmet]) -> tuple[str, tuple[Repair, ...], bool]:
    """(advice, repairs, whether TensorFlow moves) for dependents made for another TensorFlow: the
    dependent's release made for the installed TensorFlow where the companion table knows one (TensorFlow
    stays); otherwise TensorFlow has to move into the dependent's range, under the installed build's own
    name (never a second build), and the reason says why."""
    tf_name, tf_version = made_for.installed_tensorflow(facts) or ("", "")
    # a TensorFlow shim (the Windows `tensorflow` 2.15 stands for tensorflow-intel) needs its real build
    shims = [u for u in moving if requires_dist.is_tensorflow_build(u.requirer)]
    repairs: list[Repair] = [Repair.install(f"{u.name}{u.specifier}", reason=f"{u.describe()}: the real build "
                                            f"{u.requirer} {u.requirer_version} stands for") for u in shims]
    matched: list[str] = []
    stuck: dict[str, Unmet] = {}  # requirer -> a line of it that only another TensorFlow satisfies
    for item in [u for u in moving if u not in shims]:
        if item.requirer in stuck or any(m.startswith(f"{item.requirer} ") for m in matched):
            continue
        release = made_for.release_for(facts, item.requirer) if tf_version else None
        if release is None:
            stuck[item.requirer] = item
            continue
        matched.append(f"{item.requirer} {release.version}")
        repairs.append(Repair.install(f"{item.requirer}=={release.version}", reason=(
            f"{item.describe()}; {item.requirer} {release.version} is the release made for TensorFlow {tf_version}")))
    # issue 38, build 6: a TensorFlow newer than the tables: which release of a companion is made for it is not in
    # them, so its own violated pin stands (the artifact declares it) but nothing says no release exists, and
    # TensorFlow is not moved back by the main plan: the user's choices (plan/choices.py) offer that move
    past = _past_the_tables(facts, stuck)
    blocking = [u for u in moving if u.requirer in stuck and u.requirer not in past]
    for item in blocking:
        why = (f"no {item.requirer} release is made for TensorFlow {tf_version}"
               if made_for.knows_releases(item.requirer)
               else f"only another TensorFlow satisfies {item.requirer} {item.requirer_version}")
        build = f" (as {tf_name}, the build installed)" if tf_name and tf_name != item.name else ""
        repairs.append(Repair.install(f"{tf_name or item.name}{item.specifier}", reason=(
            f"{item.describe()}, and {why}: TensorFlow must move into {item.name}{item.specifier}{build}")))
    advice = [f"Install {u.name}{u.specifier}, the real build {u.requirer} {u.requirer_version} stands for."
              for u in shims]
    if matched:
        advice.append(f"Install the release made for TensorFlow {tf_version} of each dependent made for another "
                      f"({', '.join(matched)}), keeping TensorFlow {tf_version} where it is.")
    if blocking:
        one = len(stuck) == 1
        who = ", ".join(f"{u.requirer} {u.requirer_version}" for u in stuck.values())
        names = ", ".join(sorted(stuck))
        targets = ", ".join(dict.fromkeys(u.name + u.specifier for u in blocking))
        known = sorted(n for n in stuck if made_for.knows_releases(n))
        advice.append((f"No release of {', '.join(known)} is made for TensorFlow {tf_version}. " if known else "")
                      + f"{who} {'declares' if one else 'declare'} {targets}: only another TensorFlow satisfies "
                      f"{'it' if one else 'them'}, so the plan moves TensorFlow"
                      + (f" from {tf_name} {tf_version}" if tf_name else "") + ". "
                      + (f"Or keep TensorFlow and uninstall {names} if nothing uses {'it' if one else 'them'}."
                         if known else f"Or keep TensorFlow and install a release of {names} made for it, if one "
                         "exists."))
    if past:
        advice.append(_past_the_tables_advice([u for u in moving if u.requirer in past], tf_version))
    return " ".join(advice), tuple(repairs), bool(blocking)


def _past_the_tables(facts: Facts, stuck: Mapping[str, Unmet]) -> frozenset[str]:
    """The stuck requirers the companion table knows, beside a TensorFlow newer than every release the tables
    hold: their release made for it is unknown, not absent (empty when TensorFlow is one the tables hold)."""
    if knowledge_age.tensorflow_beyond(facts) is None:
        return frozenset()
    return frozenset(name for name in stuck if made_for.knows_releases(name))


def _past_the_tables_advice(items: list[Unmet], tf_version: str) -> str:
    """What to do about a companion's own violated pin on a TensorFlow the tables do not reach: a newer release of
    the companion (no command: the tables name none), or one of the choices (keep TensorFlow without it; move
    TensorFlow back into its pin)."""
    requirers = dict.fromkeys(f"{u.requirer} {u.requirer_version}" for u in items)
    names = ", ".join(dict.fromkeys(u.requirer for u in items))
    targets = ", ".join(dict.fromkeys(u.name + u.specifier for u in items))
    one = len(requirers) == 1
    end = knowledge_age.tensorflow_end()
    return (f"{', '.join(requirers)} {'declares' if one else 'declare'} {targets}, which TensorFlow {tf_version} is "
            f"outside. The tables end at TensorFlow {end or 'an earlier release'}, before {tf_version}, so which "
            f"release of {names} is made for it is not in them: install a newer {names} when one exists (not in the "
            f"tables: its Requires-Dist must admit TensorFlow {tf_version}), or, where the plan offers them as "
            f"choices, keep TensorFlow and uninstall {names}, or move TensorFlow back into {targets}.")


def _clash_advice(unmet: list[Unmet]) -> str:
    """Requirers that disagree on one distribution: no install satisfies both; say who has to move."""
    parts = []
    for name, items in clashing(unmet).items():
        wants = " but ".join(f"{i.requirer} {i.requirer_version} needs {name}{i.specifier}" for i in items)
        parts.append(f"{wants}: no {name} satisfies both, so one of them has to move (upgrade the one made for "
                     f"an older {name}, or uninstall it).")
    return " ".join(parts)


def _remediation(facts: Facts, unmet: list[Unmet]) -> Remediation:
    """One install intent per unmet pin, each naming its requirer: the planner joins them into one
    resolver step with TensorFlow pinned where it is, and reports requirers that disagree as a conflict."""
    moving = [u for u in unmet if u.moves_tensorflow]
    clash = _clash_advice(unmet)
    if moving:
        advice, moves, moved = _moving_fix(facts, moving)
        # a TensorFlow that moves brings its own pins: only the other requirers' unmet pins stay
        kept = [u for u in unmet if not (moved and requires_dist.is_tensorflow_build(u.requirer))]
        return Remediation(f"{advice} {clash}".strip(), url=PIP_URL,
                           repairs=install_repairs(kept) + moves)
    # a missing companion with no release for this TensorFlow that installs here: `pip install` would fail or move
    # TensorFlow, so no command; the advice says so
    stranded = {u.name: made_for.made_but_not_installable(facts, u.name) for u in unmet if u.installed is None}
    stranded = {name: made for name, made in stranded.items() if made}
    unmet = [u for u in unmet if u.name not in stranded]
    repairs = install_repairs(unmet)
    clashes = clashing(unmet)
    resolvable = any(u.name not in clashes for u in unmet)
    pin = requires_dist.tensorflow_pin(facts)
    keep = f", keeping {pin.replace('==', ' ')} where it is" if pin else ""
    # the pins by name: a plan that replaces their requirer (TensorFlow moved by another check) drops its pins,
    # and the advice still says what this check found wanting
    named = ", ".join(dict.fromkeys(f"{u.name}{u.specifier}" for u in unmet))
    advice = (f"Install what the metadata declares ({named}), every unmet pin in one command so the resolver "
              f"satisfies them together{keep}." if resolvable and unmet else "")
    tensorflow = (made_for.installed_tensorflow(facts) or ("TensorFlow", ""))[1]
    for name, made in stranded.items():
        advice += (f" No release of {name} made for TensorFlow {tensorflow} ({', '.join(f'{name} {r.version}' for r in made[:3])}) "
                   f"has a wheel for this platform and Python ({', '.join(sorted({p for r in made for p in r.platforms}))} "
                   "only), so no command installs it here: use the package that requires it where those wheels "
                   "exist (WSL2 on Windows), or do without it.")
    return Remediation(advice.strip() + (f" {clash}" if clash else ""), url=PIP_URL, repairs=repairs)


def _who(entries: list[Mapping[str, Any]]) -> str:
    names = [f"{e.get('name')} {e.get('version')}" for e in entries]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


@check("dependencies", "Declared dependencies (Requires-Dist)", needs=("distributions",),
       uses=("python", "tensorflow", "environment"), tags=("install",))
def dependencies(facts: Facts) -> Outcome:
    """every pin on TensorFlow's Requires-Dist closure holds (what `pip check` says), tied to the error it causes; a
    dependency inside its pin that breaks AutoGraph named as the suspect

    the environment's own declarations (where a report did not record them, the pins the release's own METADATA
    declares, from the generated release table, for that exact release and wheel platform): the Requires-Dist of
    every TensorFlow-family distribution (tensorflow*, tf-nightly, keras, tf-keras, tensorboard, ml-dtypes, ...), of
    every distribution requiring one of them (tensorflow-text, -io, -probability, ...) and of every distribution
    that closure reaches (optree through keras, typing-extensions through optree: what `pip check` judges), against
    what is installed, markers evaluated for the target Python and extras counted when installed (`and-cuda` when
    its nvidia-* libraries are there); `fail` when the import or tf.keras fails (or a keras of another release
    series than TensorFlow's own pin admits: tf.keras breaks; or, where the import was not tried, a package
    TensorFlow's import itself loads, numpy, ml-dtypes or protobuf, outside every series its pin admits:
    `import_time_dependency` rows, read from the release's source), and then a violated pin whose requirer or
    required distribution the error points into (the failing frames of the traceback and of the exceptions it was
    raised over, and the modules its messages name, mapped to the distributions owning those files:
    `facts/owners.py`) is named as the suspect; `fail` when every pin holds but AutoGraph cannot convert Python
    control flow (the child converts one function with an `if` and a `for` on tensors by `tf.autograph.to_graph`,
    which raises what `tf.function` only logs, and records the failing frames' files with their top-level imports):
    those files are TensorFlow's own, so the distributions outside TensorFlow they import are the suspects, most
    failing frames first (gast 0.2.2 under TensorFlow 2.21, inside its `gast>=0.2.1`; `facts/autograph.py`), each
    with its candidate, the tested lock's release or else one newer than installed inside every requirer's
    specifier, which the plan installs with TensorFlow pinned and `tfdoctor --prove` / `fix` try on a copy; `fail`
    for any unmet pin where the import was not tried (a saved or partial report: the declared incompatibility
    stands, as `pip check` says); `warn` while a tried TensorFlow works, or for a dependency inside the declared
    range but older than what the release's CI tested (`knowledge/tested_locks.toml`, when generated); one repair
    per unmet pin, specifier as written and requirer named, which the plan joins into one step with TensorFlow
    pinned where it is (requirers that disagree: a conflict naming both); a dependent made for another TensorFlow
    gets its release made for the installed one (the companion table), else TensorFlow moves under the installed
    build's name and the plan says why (beside a TensorFlow newer than the tables, a companion's release made for it
    is unknown, not absent: the pin still counts, the advice says where the tables end, and moving TensorFlow back
    is one of the plan's choices, never its own step); and, where every pin holds, an installed release that imports a module no
    provider here has (`module_providers.toml`: every tensorboard before 2.21 imports pkg_resources, which
    setuptools 82 removed, so the `tensorboard` command fails while TensorFlow imports) warns with the provider's
    releases that have it (`setuptools<82`), a step joined to the unmet pins' where there are some; as does a library
    whose own files need tensorboard (`distributions[].imports.stack_modules`, read through its RECORD, an
    ImportError fallback not counted: keras-tuner 1.4.8 imports it in every trial) where no installed distribution
    provides it and its Requires-Dist does not declare it (TensorFlow 2.21 no longer requires it), naming the file and
    line, with the tensorboard of TensorFlow's minor the companion table holds (`tensorboard~=2.21.0`), else the newest
    """
    # a saved report without Requires-Dist: TensorFlow's declared pins from its release's published metadata
    facts, published = published_requires.with_published(facts)
    outcome = _judge(facts)
    if not published:
        return outcome
    return replace(outcome, details=(*outcome.details, "Requires-Dist of " + ", ".join(
        p.describe() for p in published) + " read from the release's published metadata, as this report did not "
        "record the environment's own: the pins of the packages whose versions break TensorFlow"),
        evidence={**outcome.evidence, "published_requires": [p.describe() for p in published]})


def _judge(facts: Facts) -> Outcome:
    declaring = requires_dist.requirers(facts)
    if not declaring:
        if requires_dist.family_recorded(facts):
            return Outcome.skip("Requires-Dist of the TensorFlow distributions was not recorded in this report")
        return Outcome.skip("no TensorFlow-family distribution is installed (see tensorflow-install)")
    # a module the import error says is not installed counts as missing even from a partial list
    absent = import_causes.missing_distributions(section(facts, "tensorflow").get("exception"))
    unmet = requires_dist.unmet_requirements(facts, known_missing=absent)
    environment = requires_dist.marker_environment(facts)
    evidence: dict[str, Any] = {
        "requirers": [f"{e.get('name')} {e.get('version')}" for e in declaring],
        "marker_environment": {k: environment.get(k) for k in ("python_version", "sys_platform", "platform_machine")},
        "unmet": [{"requirer": u.requirer, "requirement": u.requirement, "name": u.name, "specifier": u.specifier,
                   "installed": u.installed, "extra": u.extra} for u in unmet],
    }
    broken_use = autograph.failure(facts)
    if not unmet and broken_use is not None:  # issue 29: every pin holds, yet TensorFlow breaks on use
        return _broken_on_use(facts, broken_use, evidence)
    behind = tested_locks.behind_ci(facts)
    if not unmet and behind:  # issue 29: inside the declared range, older than TensorFlow's own CI tested
        evidence["behind_ci"] = [{"name": b.name, "installed": b.installed, "tested": b.tested, "source": b.source}
                                 for b in behind]
        repairs = tuple(Repair.install(f"{b.name}=={b.tested}", reason=b.describe()) for b in behind)
        return Outcome.warn(behind[0].describe() + (f" (and {len(behind) - 1} more)" if len(behind) > 1 else ""),
                            "Inside every declared pin, but a release older than the tested one can break on use "
                            "(AutoGraph, a Keras layer) rather than on import; the tested release is the candidate.",
                            *[b.describe() for b in behind[1:]],
                            fix=Remediation(f"Install the releases TensorFlow's CI tested ({behind[0].source}).",
                                            url=behind[0].source, repairs=repairs), **evidence)
    stranded = module_providers.stranded_importers(facts)
    if stranded:
        evidence["stranded_importers"] = [{"name": s.name, "version": s.version, "module": s.provider.module,
                                           "provided_by": s.provider.provided_by, "installed": s.provider.installed}
                                          for s in stranded]
    if not unmet and stranded:  # issue 29: every pin holds, yet an installed release imports what nothing provides
        lines = [_stranded_line(s) for s in stranded]
        return Outcome.warn(lines[0] + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""),
                            "TensorFlow itself does not import it: only what the line names fails", *lines[1:],
                            fix=_stranded_fix(stranded), **evidence)
    if not unmet:
        partial = () if requires_dist.complete_record(facts) else (
            "This report lists only some distributions: a required one it does not list was not judged.",)
        return Outcome.ok(f"Every pin declared by {_who(declaring)} holds",
                          _markers_line(environment), *partial,
                          **evidence)

    imports, fate = _import_state(facts)
    tf_version = requires_dist.tensorflow_pin(facts)
    tf_version = tf_version.partition("==")[2] if tf_version else None
    keras_error = _keras_error(facts)
    untried_keras = _untried_keras(facts, imports, tf_version)
    broken = [(u, why) for u in unmet for why in [_known_to_break(u, tf_version, keras_error, imports, untried_keras)]
              if why]
    pointed = owners.owners(facts) if (imports is False or keras_error) else []
    tied = [u for u in unmet if owners.ties([o.name for o in pointed], u.requirer, u.name)]
    if tied:  # issue 29: the error's traceback points into the requirer or the required distribution
        evidence["suspects"] = [{"name": o.name, "version": o.version, "how": o.how, "evidence": o.evidence}
                                for o in pointed]
        named = ", ".join(f"{o.name} {o.version}" for o in pointed
                          if any(o.name in (u.requirer, u.name) for u in tied))
        broken = [(u, f"{(fate or keras_error or '').rstrip('.')}; the error points into {named} (suspect), and "
                      f"this pin of theirs is violated: installing {u.name}{u.specifier} on a clone "
                      "(`tfdoctor fix`) proves it") for u in tied] + [b for b in broken if b[0] not in tied]
    # untried, the declared incompatibility stands (pip check's verdict); a tried import that works is the fact
    failing = imports is not True or bool(broken)
    # issue 38: whether the child's import (and tf.keras) decided, or the metadata and tables alone
    evidence["judged"] = "import" if imports is not None and not untried_keras else "tables"

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
        details.insert(0, "The TensorFlow import was not tried in this run: the declared incompatibility stands "
                          "(`pip check` reports it too); a run that imports TensorFlow shows whether it survives it")
    fix = _remediation(facts, unmet)
    if stranded:  # the unmet pins' install alone brings the newest provider, which lacks the module
        extra = _stranded_fix(stranded)
        fix = replace(fix, advice=f"{fix.advice} {extra.advice}".strip(), repairs=fix.repairs + extra.repairs)
        details.extend(_stranded_line(s) for s in stranded)
    summary = first.describe() + more
    if failing:
        return Outcome.fail(summary, *details, fix=fix, **evidence)
    return Outcome.warn(summary, *details, fix=fix, **evidence)


def _stranded_line(stranded: module_providers.StrandedImporter) -> str:
    provider = stranded.provider
    return (f"{stranded.name} {stranded.version} imports {provider.module}, which {provider.provided_by} provides "
            f"({provider.lack()}): {stranded.uses} fails")


def _stranded_fix(stranded: list[module_providers.StrandedImporter]) -> Remediation:
    wanted = dict.fromkeys(s.provider.provided_by for s in stranded)
    return Remediation(" ".join(f"Install '{w}' (TensorFlow stays where it is)." for w in wanted),
                       url=stranded[0].provider.source,
                       repairs=tuple(Repair.install(s.provider.provided_by, reason=_stranded_line(s))
                                     for s in stranded))


def _markers_line(environment: Mapping[str, Any]) -> str:
    """Which environment the markers were evaluated for, naming what the report did not record."""
    python = environment.get("python_version") or "(version not recorded)"
    where = " ".join(str(environment[k]) for k in ("sys_platform", "platform_machine") if environment.get(k))
    return f"Markers evaluated for Python {python} on {where or 'a platform not recorded'}."


def _broken_on_use(facts: Facts, failed: Mapping[str, Any], evidence: dict[str, Any]) -> Outcome:
    """AutoGraph cannot convert Python control flow while every declared pin holds: the distributions the
    failing code imports from outside TensorFlow are the suspects, the first one's candidate the repair."""
    cause = autograph.cause(failed)
    evidence["autograph"] = {"cause": cause, "files": [f.get("file") for f in failed.get("files") or ()
                                                       if isinstance(f, Mapping)]}
    summary = "AutoGraph cannot convert Python control flow (tf.function runs it unconverted, and an `if` on a tensor fails)"
    found = autograph.suspects(facts)
    if not found:
        return Outcome.fail(summary, f"tf.autograph.to_graph raised {cause}",
                            "Every declared pin holds, and the failing code imports no distribution outside TensorFlow.",
                            **evidence)
    first = found[0]
    evidence["suspects"] = [{"name": s.name, "version": s.version, "how": "imported by the failing frames",
                             "frames": s.frames, "evidence": list(s.files)} for s in found]
    evidence["candidates"] = [{"name": s.name, "requirement": s.requirement,
                               "why": f"{s.name} {s.version} breaks AutoGraph ({s.inside()})"} for s in found]
    prove = "the experiment that would prove it: `tfdoctor --prove` (`tfdoctor fix` runs it before it applies anything)"
    details = [f"tf.autograph.to_graph raised {cause}",
               *(f"suspect: {s.describe()}" for s in found), prove]
    pin = requires_dist.tensorflow_pin(facts)
    keep = f", keeping {pin.replace('==', ' ')} where it is" if pin else ""
    why = (f"suspect {first.name} {first.version}: {first.inside()}, but the AutoGraph code that fails imports it; "
           + (f"TensorFlow's CI tested {first.tested}" if first.tested else "a newer release inside every pin"))
    advice = (f"Install {first.requirement}{keep}: {first.name} {first.version} is {first.inside()}, but AutoGraph's "
              f"converter that fails imports it. `tfdoctor --prove` tries it on a throwaway copy first (it uses "
              "the package index).")
    return Outcome.fail(f"{summary}: suspect {first.name} {first.version}", *details,
                        fix=Remediation(advice, url=AUTOGRAPH_URL, repairs=(Repair.install(first.requirement, reason=why),)),
                        **evidence)


def clashing(unmet: list[Unmet]) -> dict[str, list[Unmet]]:
    """Required names whose requirers disagree: a lower bound at or above another's upper bound, so no
    version can satisfy them together (one requirer has to move). name -> the unmet lines involved."""
    by_name: dict[str, list[Unmet]] = {}
    for item in unmet:
        if not item.moves_tensorflow:
            by_name.setdefault(item.name, []).append(item)
    found = {}
    for name, items in by_name.items():
        if len({i.requirer for i in items}) < 2:
            continue
        lows, highs = [], []
        for item in items:
            try:
                clauses = list(SpecifierSet(item.specifier))
            except InvalidSpecifier:
                continue
            for clause in clauses:
                bound = requires_dist.version_of(clause.version.rstrip(".*"))
                if bound is None:
                    continue
                if clause.operator in (">", ">=", "==", "~=", "==="):
                    lows.append((bound, clause.operator == ">"))
                if clause.operator in ("<", "<="):
                    highs.append((bound, clause.operator == "<"))
                if clause.operator in ("==", "==="):
                    highs.append((bound, False))
        if lows and highs:
            low, low_strict = max(lows)
            high, high_strict = min(highs)
            if low > high or (low == high and (low_strict or high_strict)):
                found[name] = items
    return found
