"""Companions of TensorFlow as user code imports them: tf-keras, tensorflow-text, -io, -probability,
-decision-forests, -addons, -hub, -model-optimization, -datasets, keras-hub/-nlp/-cv.

A companion built for another TensorFlow can declare that it fits and still not load: its native
library misses a TensorFlow symbol ("undefined symbol"), it checks the TensorFlow version at import
(tensorflow-probability raises, tensorflow-addons warns), or it imports Keras 2 internals, while
`import tensorflow` works. The TensorFlow child imports each installed one after TensorFlow and tf.keras
and records its fate; this check names the companion at fault (an error inside keras-hub can be
tensorflow-text's library) and asks for its release made for the installed TensorFlow, read from the
installed distribution's metadata and the companion table (facts/made_for.py, facts/companions.py, which
knows tensorflow-probability's import floors), narrowed by what the release checks at import
(tensorflow-addons' supported range, knowledge/companion_imports.toml).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from tfdoctor.checking.registry import check
from tfdoctor.facts import (
    Facts,
    canonical_name,
    companions as companions_table,
    experiments as experiment_facts,
    is_recorded,
    knowledge_age,
    made_for,
    module_providers,
    requires_dist,
    section,
    tensorflow_child,
    versions_installed,
)
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.remedies import companion_reach, experiments as experiment_remedies
from tfdoctor.remedies.tf_keras import tf_keras_repairs
from tfdoctor.results.model import Outcome, Remediation, Status
from tfdoctor.results.repairs import Repair

PIP_URL = "https://pip.pypa.io/en/stable/topics/dependency-resolution/"
BUILT_ELSEWHERE = "built-for-another-tensorflow"


@dataclass(frozen=True)
class Cause:
    id: str
    cause: str
    meaning: str
    source: str
    line: str  # the text that matched
    groups: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Problem:
    module: str
    status: Status
    summary: str
    details: list[str]
    advice: str
    repairs: tuple[Repair, ...] = ()
    url: Optional[str] = None
    # what the tables found without importing (static_problems): "needs-tf-keras", "import-check" (the release's
    # own import-time check refuses this TensorFlow), "table" (the companion table: made for another one)
    kind: Optional[str] = None


def _texts(entry: Mapping[str, Any]) -> dict[str, list[str]]:
    exception = entry.get("exception") if isinstance(entry.get("exception"), Mapping) else None
    said = [f"{exception.get('type')}: {exception.get('message')}"] if exception else []
    if exception:
        said += [f"{c.get('type')}: {c.get('message')}" for c in exception.get("causes") or () if isinstance(c, Mapping)]
    return {"exception": said,
            "warning": [str(w.get("message") or "") for w in entry.get("warnings") or () if isinstance(w, Mapping)],
            "log": [str(line) for line in entry.get("log") or ()]}


def cause_of(entry: Mapping[str, Any]) -> Optional[Cause]:
    """The first known failure (knowledge/companion_imports.toml) in what the import raised, warned or logged."""
    texts = _texts(entry)
    for row in knowledge_rows("companion_imports", "import_failures"):
        pattern = re.compile(row["pattern"])
        for where in row["in"]:
            for text in texts.get(where, ()):
                match = pattern.search(text)
                if match:
                    return Cause(row["id"], row["cause"], row["meaning"], row["source"], text,
                                 {k: v for k, v in match.groupdict().items() if v is not None})
    return None


def distribution_of(facts: Facts, module: str) -> tuple[str, Optional[str]]:
    """(distribution, installed version) that installs a top-level module: the recorded distribution whose
    files hold it (first on sys.path), else the module's name spelled as a distribution."""
    for entry in facts.get("distributions") or ():
        if isinstance(entry, Mapping) and module in (entry.get("top_level") or ()):
            return canonical_name(str(entry.get("name"))), entry.get("version")
    name = canonical_name(module)
    copy = requires_dist.first_copy(facts, name) or {}
    return name, copy.get("version")


def culprit(entry: Mapping[str, Any], modules: Iterable[str]) -> str:
    """The companion whose file the error names (keras_hub failing in tensorflow_text's library is
    tensorflow_text's fault), else the one imported. Only companions can be at fault: TensorFlow's own
    files appear in such errors too."""
    text = "\n".join(line for lines in _texts(entry).values() for line in lines)
    named = []
    for module in set(modules) | set(tensorflow_child.COMPANION_MODULES) | {str(entry.get("module"))}:
        match = re.search(rf"[/\\]{re.escape(module)}[/\\]", text)
        if match:
            named.append((match.start(), module))
    return min(named)[1] if named else str(entry.get("module"))


def generated_import_check(distribution: str, version: str) -> Optional[Mapping[str, Any]]:
    """The release's import-time check as tools/refresh_knowledge.py read it from its wheel
    (knowledge/companion_import_checks.toml): {'tensorflow', 'any_of', 'enforced', 'read_at', 'source'}."""
    wanted = requires_dist.version_of(version)
    return next((row for row in knowledge_rows("companion_import_checks", "import_check")
                 if row["distribution"] == distribution and requires_dist.version_of(row["release"]) == wanted), None)


def _import_specifier(distribution: str, version: str) -> Optional[SpecifierSet]:
    """What the release checks at import: read from its wheel (companion_import_checks.toml), else the curated
    rows: tensorflow-probability's floor (companions_curated.toml, through facts/companions.py),
    tensorflow-addons' supported range (companion_imports.toml)."""
    generated = generated_import_check(distribution, version)
    if generated is not None:
        texts = [generated["tensorflow"]] if generated["tensorflow"] else [
            f"=={generated['any_of'][0]}"] if len(generated["any_of"]) == 1 else []
        return SpecifierSet(texts[0]) if texts else None
    floor = companions_table.import_check(distribution, version)
    texts = [floor.tensorflow] if floor else [row["tensorflow"] for row in
                                               knowledge_rows("companion_imports", "import_requirements")
                                               if row["distribution"] == distribution and row["release"] == version]
    try:
        return SpecifierSet(texts[0]) if texts else None
    except InvalidSpecifier:
        return None


def _releases_with_import_checks(distribution: str) -> list[str]:
    floors = [r.version for r in companions_table.releases(distribution)
              if companions_table.import_check(distribution, r.version)]
    ranges = [row["release"] for row in knowledge_rows("companion_imports", "import_requirements")
              if row["distribution"] == distribution]
    read = [row["release"] for row in knowledge_rows("companion_import_checks", "import_check")
            if row["distribution"] == distribution]
    return list(dict.fromkeys(read + floors + ranges))


def accepts_at_import(distribution: str, version: str, tf_version: str) -> Optional[bool]:
    """Does this release accept this TensorFlow when imported? None when nothing is known about its
    import-time check."""
    generated = generated_import_check(distribution, version)
    if generated is not None and len(generated["any_of"]) > 1:  # tf.__version__ must be one of them
        wanted = requires_dist.version_of(tf_version)
        return any(requires_dist.version_of(v) == wanted for v in generated["any_of"])
    specifier = _import_specifier(distribution, version)
    return None if specifier is None else specifier.contains(tf_version, prereleases=True)


def release_made_for(facts: Facts, distribution: str) -> Optional[str]:
    """The version of the companion's release made for the installed TensorFlow: the companion table's
    (from PyPI metadata, facts/made_for.py) unless that release refuses this TensorFlow at import; then,
    or when the table knows none, the newest release whose import-time check accepts it."""
    installed = made_for.installed_tensorflow(facts)
    if installed is None:
        return None
    tf_version = installed[1]
    # issue 29: a companion naming TensorFlow only in an extra (tensorflow-io) still says which one it is built for
    release = made_for.release_for(facts, distribution, via_extras=True)
    if release is not None and accepts_at_import(distribution, str(release.version), tf_version) is not False:
        return str(release.version)
    fitting = [v for v in _releases_with_import_checks(distribution) if accepts_at_import(distribution, v, tf_version)]
    ceiling = requires_dist.version_of(release.version) if release is not None else None
    fitting = [v for v in fitting if ceiling is None or requires_dist.version_key(v) <= ceiling]
    return max(fitting, key=requires_dist.version_key) if fitting else None


def _tensorflow_words(facts: Facts) -> str:
    installed = made_for.installed_tensorflow(facts)
    return f"{installed[0]} {installed[1]}" if installed else "the installed TensorFlow"


def _release_fix(facts: Facts, distribution: str, installed: Optional[str], why: str) -> tuple[str, tuple[Repair, ...]]:
    """(advice, repairs) that put the companion's release made for the installed TensorFlow in place."""
    tensorflow = _tensorflow_words(facts)
    release = release_made_for(facts, distribution)
    if release is None and knowledge_age.tensorflow_beyond(facts) is not None:
        # the companion table ends before this TensorFlow: a release made for it may exist, unknown to the tables
        return (f"{tensorflow} is newer than the companion table, so which {distribution} release is made for it is "
                f"not in the tables: install the {distribution} release whose Requires-Dist names {tensorflow}, if "
                "there is one yet, or uninstall it if nothing needs it.", ())
    if release is None:
        return (f"No release of {distribution} is known to be made for {tensorflow}: uninstall {distribution} if "
                f"nothing needs it, or keep a TensorFlow it supports in an environment of its own.", ())
    if installed and requires_dist.version_of(installed) == requires_dist.version_of(release):
        return (f"{distribution} {installed} is the release made for {tensorflow}, yet it fails: reinstall it "
                f"from the same index as TensorFlow, or report it to {distribution}.", ())
    reason = f"{why}; {distribution} {release} is the release made for {tensorflow}"
    advice = f"Install {distribution} {release}, the release made for {tensorflow} (TensorFlow stays where it is)."
    repairs: tuple[Repair, ...] = (Repair.install(f"{distribution}=={release}", reason=reason),)
    # the release put in place imports tf_keras (tensorflow-probability 0.24, read from its wheel): under Keras 3
    # without tf-keras it would fail at its next line, so its tf-keras is part of the same repair
    user = tf_keras_user(distribution, release)
    if user is not None and not _installed(facts).get("tf-keras") and _keras3(facts):
        needed = (f"{distribution} {release} imports tf_keras (read from its wheel: {user['source']}), which is not "
                  f"installed; tf.keras beside {tensorflow} is Keras 3")
        repairs += tf_keras_repairs(facts, needed)
        advice += (f" {distribution} {release} imports tf_keras: install "
                   f"{made_for.tf_keras_requirement(facts) or 'tf-keras'} with it.")
    return advice, repairs


def _problem(facts: Facts, entry: Mapping[str, Any], modules: list[str], fate: Optional[str]) -> Optional[Problem]:
    module = str(entry.get("module"))
    found = cause_of(entry)
    failed = entry.get("status") == "failed" or fate is not None
    if not failed and (found is None or found.cause not in (BUILT_ELSEWHERE, "tensorflow-unsupported")):
        return None
    at_fault = culprit(entry, modules)
    distribution, installed = distribution_of(facts, at_fault)
    named = f"{distribution} {installed}" if installed else distribution
    tensorflow = _tensorflow_words(facts)
    exception = entry.get("exception") if isinstance(entry.get("exception"), Mapping) else {}
    error = (f"{tensorflow_child.short_type(exception.get('type'))}: "
             f"{tensorflow_child.first_line(exception.get('message'), 300)}"
             if exception else tensorflow_child.first_line(found.line, 300) if found else "")
    how = fate or ("fails" if failed else "imports, but warns")
    through = f" (in {at_fault}, which it imports)" if at_fault != module else ""
    details = [f"error: {error}"] if error else []
    unexplained = found is None and failed and not fate
    keras2 = _keras2_library_under_keras3(facts, distribution) if unexplained else None
    providers = module_providers.missing_providers(facts, exception) if unexplained else []
    if keras2 is not None or providers:
        return _undeclared_needs(facts, module, distribution, installed, f"`import {module}` {how}{through}",
                                 error, details, keras2, providers)
    if found is None:
        why = f"{named} fails to import beside {tensorflow}"
        advice, repairs = _release_fix(facts, distribution, installed, why)
        advice = (f"The interpreter itself ended while importing {module}, most often because a native library of it was built "
                  f"for another TensorFlow. {advice}" if fate else f"tfdoctor does not know this error. {advice}")
        summary = f"`import {module}` {how}{through}" + (f": {error}" if error else "")
        return Problem(module, Status.FAIL, summary, details, advice, repairs)
    details.append(f"known: {found.meaning} ({found.source.split(' ', 1)[0]})")
    if found.cause == "needs-tf-keras":
        wanted = made_for.tf_keras_requirement(facts)
        reason = f"{named} imports tf_keras, which is not installed"
        summary = f"`import {module}` {how}{through}: {named} needs tf-keras, which is not installed"
        layered = _legacy_keras_fix(facts, distribution, tf_keras_repairs(facts, reason))
        if layered is not None:
            return Problem(module, Status.FAIL, summary, details, layered.advice, layered.repairs, layered.url)
        return Problem(module, Status.FAIL, summary, details,
                       f"Install {wanted or 'tf-keras'}, the tf-keras made for {tensorflow}.",
                       tf_keras_repairs(facts, reason), found.source.split(" ", 1)[0])
    if found.cause == "tensorflow-too-old":
        summary = (f"`import {module}` {how}{through}: {named} requires TensorFlow >= {found.groups.get('required')} "
                   f"when imported (its metadata does not say so)")
    elif found.cause == "tensorflow-unsupported":
        summary = (f"`import {module}` {how}{through}: {named} supports TensorFlow >= {found.groups.get('minimum')}, "
                   f"< {found.groups.get('maximum')} (it warns at import), not {tensorflow}")
    else:
        summary = f"`import {module}` {how}{through}: {named} was built for another TensorFlow than {tensorflow}"
    advice, repairs = _release_fix(facts, distribution, installed, f"{named} is not made for {tensorflow}")
    status = Status.WARN if found.cause == "tensorflow-unsupported" and not failed else Status.FAIL
    return Problem(module, status, summary, details, advice, repairs, found.source.split(" ", 1)[0])


def _undeclared_needs(facts: Facts, module: str, distribution: str, installed: Optional[str], what: str, error: str,
                      details: list[str], keras2: Optional[Mapping[str, Any]],
                      providers: list[module_providers.MissingProvider]) -> Problem:
    """An import that fails on what the library needs and does not declare: tf_keras under Keras 3 (a Keras 2
    library without tf-keras; one older than the library's move to tf_keras is upgraded past it), a module its
    provider no longer has (pkg_resources, removed in setuptools 82: tensorflow/hub#934). Every need found is
    in the one repair, so the pasted plan gets past each error in turn, not only the first."""
    named = f"{distribution} {installed}" if installed else distribution
    causes, advice, intents, url = [], [], [], None
    tf_keras: tuple[Repair, ...] = ()
    for provider in providers:
        causes.append(f"{named} imports {provider.module}, which {provider.provided_by} provides ({provider.lack()}; "
                      f"{distribution}'s Requires-Dist does not name {provider.distribution})")
        advice.append(f"Install '{provider.provided_by}', which provides {provider.module} ({distribution} imports "
                      f"it without requiring {provider.distribution}).")
        intents.append(Repair.install(provider.provided_by, reason=causes[-1]))
        details.append(f"{provider.module} is provided by {provider.provided_by}: {provider.source}")
        url = url or provider.source
    release_repairs: tuple[Repair, ...]
    if keras2 is not None:
        reason = f"{named} is a Keras 2 library (its releases import tf_keras); tf.keras here is Keras 3"
        upgrade = _past_the_move(facts, distribution, installed)
        if upgrade is not None:
            repair, moved = upgrade
            release_advice, release_repairs = (f"Upgrade {distribution} to {moved['release']} or later: {named} "
                                               "predates its move to tf_keras, and no setting makes it work under "
                                               "Keras 3.", (repair,))
        else:
            release_advice, release_repairs = _release_fix(facts, distribution, installed,
                                                           f"{named} fails under Keras 3")
        wanted = made_for.tf_keras_requirement(facts) or "tf-keras"
        advice.append(f"Install {wanted}, the Keras 2 that {distribution} uses under Keras 3 (pip install "
                      f"'{distribution}[tf]' where it offers that extra)."
                      + (f" {release_advice}" if release_repairs else ""))
        tf_keras = tf_keras_repairs(facts, reason) + tuple(release_repairs)
        details.append(f"{distribution} moved to tf_keras (Keras 2) for Keras 3: {keras2['source']}")
        url = url or keras2["source"]
    # once it imports, a Keras 2 layer it exports (hub's KerasLayer) needs tf.keras to be tf-keras as well
    layered = _legacy_keras_fix(facts, distribution, tf_keras)
    if layered is not None:
        advice.append(layered.advice)
    intents.extend(layered.repairs if layered is not None else tf_keras)
    under = " under Keras 3, and tf-keras is not installed" if keras2 is not None else ""
    summary = (f"{what}{under}: " + "; ".join(causes) if causes
               else f"{what}{under}" + (f": {error}" if error else ""))
    return Problem(module, Status.FAIL, summary, details, " ".join(advice), tuple(intents), url)


def _past_the_move(facts: Facts, distribution: str, installed: Optional[str]
                   ) -> Optional[tuple[Repair, Mapping[str, Any]]]:
    """(repair, the moved release's row): install the library's first release that imports tf_keras itself, when
    the installed one predates that move. tf-keras and TF_USE_LEGACY_KERAS alone do not repair it: tensorflow-hub
    0.15 imports tf.estimator, which TensorFlow 2.16 removed (tensorflow/hub#901). None when the installed release
    has moved."""
    if tf_keras_user(distribution, installed) is not None:
        return None
    moved = moved_to_tf_keras_after(distribution, installed)
    if moved is None:
        return None
    reason = (f"{distribution} {installed} predates {distribution}'s move to tf_keras ({moved['release']} imports "
              f"it): it was written for Keras 2 as tf.keras, which is Keras 3 in {_tensorflow_words(facts)}")
    return Repair.install(f"{distribution}>={moved['release']}", reason=reason), moved


def keras2_layers(distribution: str) -> list[tuple[str, str]]:
    """(module, class) of the Keras layers a companion exports that subclass tf-keras's Layer once tf.keras is
    Keras 3 (knowledge/companion_layers.toml, read from its source: tensorflow_hub.KerasLayer)."""
    return [(str(row["module"]), str(row["name"])) for row in knowledge_rows("companion_layers", "layers")
            if canonical_name(str(row["distribution"])) == distribution]


def _legacy_keras_fix(facts: Facts, distribution: str, tf_keras: tuple[Repair, ...]) -> Optional[Remediation]:
    """A library that imports tf_keras under Keras 3 and exports a Keras layer (tensorflow_hub.KerasLayer)
    needs more than tf-keras: its layer is then a tf-keras layer, which a Keras 3 tf.keras model refuses (the
    experiments prove it once tf-keras is there), so tf.keras must be tf-keras too: TF_USE_LEGACY_KERAS=1, the
    same step the proof asks for (remedies/experiments.py). None for a library without such a layer, or when
    tf.keras is not Keras 3."""
    layers = keras2_layers(distribution)
    if not layers or not _keras3(facts) or not _keras3_by_tensorflow(facts):
        return None  # before 2.16 there is no switch: tf.keras is Keras 2 once keras fits TensorFlow's pin
    module, layer = layers[0]
    return experiment_remedies.use_remediation(facts, {"goal": {"module": module, "layer": layer}}, tf_keras,
                                               section(facts, "tensorflow").get("version")
                                               or (made_for.installed_tensorflow(facts) or ("", None))[1])


# ------------------------------------------------------------------ judged without the child (issue 29)

def tf_keras_user(distribution: str, version: Optional[str]) -> Optional[Mapping[str, Any]]:
    """The generated row (knowledge/tf_keras_users.toml, read from the wheel's own files) saying that this
    release imports tf_keras or requires tf-keras outside extras: the row of the release itself, else of the
    newest older release the table holds (a library that moved to tf_keras stays there); None otherwise."""
    wanted = requires_dist.version_of(version)
    if wanted is None:
        return None
    rows = [row for row in knowledge_rows("tf_keras_users", "release")
            if canonical_name(row["distribution"]) == distribution
            and requires_dist.version_of(row["release"]) is not None and requires_dist.version_key(row["release"]) <= wanted]
    if not rows:
        return None
    row = max(rows, key=lambda r: requires_dist.version_key(r["release"]))
    declared = [line for line in row["requires_tf_keras"] if "extra" not in line]
    return row if row["imports_tf_keras"] or declared else None


def files_tf_keras_user(facts: Facts, distribution: str) -> Optional[Mapping[str, Any]]:
    """What the installed library's own files say where no table row does (issue 38, build 5: retina-face 0.0.17,
    in no list, runs `import tf_keras` when imported under TensorFlow 2.16+): a row shaped like tf_keras_users.toml's
    when a .py file its RECORD lists imports tf_keras outside a fallback (collect/library_imports.py); else None."""
    entry = requires_dist.first_copy(facts, distribution) or {}
    imports = entry.get("imports")
    if not isinstance(imports, Mapping) or not imports.get("tf_keras"):
        return None
    return {"distribution": distribution, "release": entry.get("version"),
            "imports_tf_keras": [str(line) for line in imports["tf_keras"]], "requires_tf_keras": [],
            "sets_legacy_variable": bool(imports.get("sets_legacy_variable")), "source": None, "read_from": "files"}


# frameworks a library without TensorFlow code can run its models on: with one installed, TensorFlow is not the
# environment's only framework, and a library that left TensorFlow for them is no finding
OTHER_FRAMEWORKS = ("torch", "jax", "flax")


def _tensorflow_code_dropped(facts: Facts, name: str, version: str) -> Optional[Problem]:
    """A library whose installed release ships no TensorFlow code (none of the .py files its RECORD lists imports
    tensorflow or tf_keras: read whole, collect/library_imports.py) while an earlier release did (tf_keras_users.toml:
    transformers 4.x imports tf_keras, 5.0 removed its TensorFlow classes), in an environment plainly set up for
    TensorFlow: a TensorFlow build is installed (static_problems' premise) and no other framework it could run on
    (OTHER_FRAMEWORKS). A warning naming the last release that had TensorFlow code, with the plan that returns to
    it (and its tf-keras under Keras 3); keeping the release for PyTorch or JAX is the other choice, said."""
    entry = requires_dist.first_copy(facts, name) or {}
    imports = entry.get("imports")
    if not isinstance(imports, Mapping) or not imports.get("complete") or not imports.get("files_read") \
            or imports.get("tensorflow_files") or imports.get("tf_keras_files") or imports.get("tf_keras_optional_files"):
        return None
    installed_version = requires_dist.version_of(version)
    if installed_version is None or any(_installed(facts).get(other) for other in OTHER_FRAMEWORKS):
        return None
    rows = [row for row in knowledge_rows("tf_keras_users", "release") if canonical_name(row["distribution"]) == name
            and requires_dist.version_of(row["release"]) is not None]
    had = [row for row in rows if row["imports_tf_keras"] and requires_dist.version_key(row["release"]) < installed_version]
    if not had:
        return None
    last = max(had, key=lambda r: requires_dist.version_key(r["release"]))
    without = [row for row in rows if not row["imports_tf_keras"]
               and requires_dist.version_key(last["release"]) < requires_dist.version_key(row["release"])]
    first_without = min(without, key=lambda r: requires_dist.version_key(r["release"]))["release"] if without else None
    requirement = f"{name}<{first_without}" if first_without else f"{name}<={last['release']}"
    named = f"{name} {version}"
    tensorflow = _tensorflow_words(facts)
    reason = (f"{named} ships no TensorFlow code (none of its {imports.get('files_read')} .py files imports tensorflow "
              f"or tf_keras); {name} {last['release']} is the last release with it")
    repairs: tuple[Repair, ...] = (Repair.install(requirement, reason=reason),)
    needs_tf_keras = "tf-keras" not in _installed(facts) and _keras3(facts)
    if needs_tf_keras:
        repairs += tf_keras_repairs(facts, f"{name} {last['release']} imports tf_keras (read from its wheel: "
                                           f"{last['source']}); tf.keras beside {tensorflow} is Keras 3")
    wanted = made_for.tf_keras_requirement(facts) or "tf-keras"
    advice = (f"Two choices. To use {name} with TensorFlow, install '{requirement}' ({name} {last['release']} is the "
              f"last release with TensorFlow code)" + (f" and {wanted}, which it imports under Keras 3" if needs_tf_keras
                                                       else "") + ": the plan does this, TensorFlow stays. "
              f"Or keep {named} and run its models with PyTorch or JAX (install one of them): nothing of it uses "
              f"{tensorflow}.")
    details = [f"read from its files: {imports.get('files_read')} .py files listed in its RECORD, none imports "
               "tensorflow or tf_keras",
               f"{name} {last['release']} imports tf_keras (read from its wheel: {', '.join(last['imports_tf_keras'][:2])}"
               f" {last['source']})",
               f"no other framework it runs on is installed ({', '.join(OTHER_FRAMEWORKS)})"]
    return Problem(name, Status.WARN, f"{named} ships no TensorFlow code (its TensorFlow classes are gone; "
                   f"{name} {last['release']} was the last release with them), and this environment is set up for "
                   f"{tensorflow} alone", details, advice, repairs, last["source"], kind="no-tensorflow-code")


def moved_to_tf_keras_after(distribution: str, version: Optional[str]) -> Optional[Mapping[str, Any]]:
    """The oldest generated row of a release *newer* than `version` that imports tf_keras, when the table holds
    no row saying `version` (or an older release) imports it: the installed release predates the library's move
    to tf_keras, so it was written for Keras 2 as tf.keras (tensorflow-hub 0.15, deepface 0.0.87). None else."""
    installed = requires_dist.version_of(version)
    if installed is None:
        return None
    later = [row for row in knowledge_rows("tf_keras_users", "release")
             if canonical_name(row["distribution"]) == distribution and row["imports_tf_keras"]
             and (requires_dist.version_of(row["release"]) or installed) > installed]
    if not later:
        return None
    return min(later, key=lambda r: requires_dist.version_key(r["release"]))


def _keras2_library_under_keras3(facts: Facts, distribution: str) -> Optional[Mapping[str, Any]]:
    """The newest tf_keras_users row of a library whose releases import tf_keras (it moved to Keras 2's tf_keras
    when tf.keras became Keras 3), when tf.keras is Keras 3 here and tf-keras is not installed; else None. Keras 3
    is read from the installed TensorFlow, else from the child's tf.keras or the keras distribution's major."""
    from tfdoctor.facts import tensorflow_pins
    from tfdoctor.facts.tensorflow_distributions import first_version

    rows = [row for row in knowledge_rows("tf_keras_users", "release")
            if canonical_name(row["distribution"]) == distribution
            and (row["imports_tf_keras"] or [line for line in row["requires_tf_keras"] if "extra" not in line])]
    if not rows or first_version(facts, "tf-keras"):
        return None
    legacy = tensorflow_pins.legacy_keras()
    if str(section(facts, "environment").get(legacy["variable"]) or "") in legacy["true_values"]:
        return None
    keras = section(facts, "tensorflow").get("keras")
    keras_major = requires_dist.version_of(first_version(facts, "keras"))
    if not (_keras3(facts) or (isinstance(keras, Mapping) and keras.get("flavor") == "keras3")
            or (made_for.installed_tensorflow(facts) is None and keras_major is not None and keras_major.major >= 3)):
        return None
    return max(rows, key=lambda r: requires_dist.version_key(r["release"]))


def _keras3(facts: Facts) -> bool:
    """Is the keras package Keras 3 under tf.keras here: TensorFlow 2.16 or later not switched to tf-keras by
    TF_USE_LEGACY_KERAS, or an older TensorFlow beside a Keras 3 distribution (its tf.keras, made for Keras 2,
    then breaks: the dependencies check says so), where a library that can use tf_keras needs it just the same
    (keras-hub#1417: tensorflow-hub 0.16.0 under TensorFlow 2.15 and Keras 3)."""
    from tfdoctor.facts import tensorflow_pins

    by_tensorflow = _keras3_by_tensorflow(facts)
    if by_tensorflow is False:
        keras = requires_dist.version_of(_installed(facts).get("keras") or "")
        return keras is not None and keras.major >= 3
    legacy = tensorflow_pins.legacy_keras()
    return bool(by_tensorflow) and str(section(facts, "environment").get(legacy["variable"]) or "") \
        not in legacy["true_values"]


def _keras3_by_tensorflow(facts: Facts) -> Optional[bool]:
    """Does the installed TensorFlow make Keras 3 its tf.keras (2.16 and later, where TF_USE_LEGACY_KERAS can
    switch it back)? None when no TensorFlow version is known."""
    from tfdoctor.facts import tensorflow_pins

    installed = made_for.installed_tensorflow(facts)
    version = requires_dist.version_of(installed[1]) if installed else None
    if version is None:
        return None
    return version.release[:2] >= tuple(int(p) for p in str(tensorflow_pins.legacy_keras()["tf_min"]).split("."))


def _installed(facts: Facts) -> Mapping[str, str]:
    """name -> installed version (its first copy that records one): indexed once per run, since this is asked
    again for each installed distribution (issue 36). Read-only."""
    return versions_installed(facts)


def static_problems(facts: Facts, seen: Iterable[str] = ()) -> list[Problem]:
    """What the tables say about the installed companions, without importing them: a library that imports
    tf_keras installed under Keras 3 without tf-keras; a release whose own import check refuses this
    TensorFlow (tensorflow-probability's floor, tensorflow-addons' range, read from their tagged source); a
    release the companion table says is made for another TensorFlow, where its metadata was not recorded
    (the dependencies check judges recorded Requires-Dist). `seen`: distributions already judged."""
    installed = made_for.installed_tensorflow(facts)
    if installed is None:
        return []
    tensorflow = _tensorflow_words(facts)
    have = _installed(facts)
    problems: list[Problem] = []
    later: list[Problem] = []  # a warning import check's finding, after the failure the import meets first
    for name, version in have.items():
        if name in set(seen) or requires_dist.is_tensorflow_build(name):
            continue
        named = f"{name} {version}"
        refused, raises = _import_check_problem(facts, name, version)
        if refused is not None and raises:  # the import stops there; the release that replaces it brings its needs
            problems.append(refused)
            continue
        if refused is not None:  # it only warns, and the import goes on to what else it needs (TF-DF: tf_keras)
            later.append(refused)
        user = tf_keras_user(name, version) or files_tf_keras_user(facts, name)
        if user is not None and "tf-keras" not in have and _keras3(facts):
            where = ", ".join(user["imports_tf_keras"][:2]) or "; ".join(user["requires_tf_keras"])
            read = f"read from its files: {where}" if user.get("read_from") == "files" else (
                f"read from its wheel: {where} ({user['source']})")
            reason = (f"{named} imports tf_keras (Keras 2), which is not installed; "
                      + (f"tf.keras of {tensorflow} is Keras 3" if _keras3_by_tensorflow(facts)
                         else f"the keras beside {tensorflow} is Keras 3"))
            wanted = made_for.tf_keras_requirement(facts)
            layered = _legacy_keras_fix(facts, name, tf_keras_repairs(facts, reason))
            if layered is not None:
                problems.append(Problem(name, Status.FAIL, f"{named} needs tf-keras under Keras 3, and tf-keras is not "
                                        "installed", [read],
                                        layered.advice, layered.repairs, layered.url, kind="needs-tf-keras"))
                continue
            problems.append(Problem(
                name, Status.FAIL, f"{named} needs tf-keras under Keras 3, and tf-keras is not installed",
                [read],
                f"Install {wanted or 'tf-keras'}, the tf-keras made for {tensorflow}: {name} uses it for its Keras "
                f"layers."
                + (f" For tf.keras itself to be Keras 2 too (a model mixing tf.keras and {name} layers), also set "
                   "TF_USE_LEGACY_KERAS=1 before TensorFlow is imported." if _keras3_by_tensorflow(facts) else ""),
                tf_keras_repairs(facts, reason), user.get("source"), kind="needs-tf-keras"))
            continue
        dropped = _tensorflow_code_dropped(facts, name, version)
        if dropped is not None:
            later.append(dropped)
            continue
        refused_layer = _keras2_layer_problem(facts, name, version) if user is not None else None
        if refused_layer is not None:
            problems.append(refused_layer)
            continue
        upgrade = _past_the_move(facts, name, version)  # None where the release itself imports tf_keras
        if upgrade is not None and "tf-keras" not in have and _keras3(facts) and _keras3_by_tensorflow(facts):
            repair, moved = upgrade
            release = moved["release"]
            reason = f"{name} {release} and later import tf_keras; {named} was written for Keras 2 as tf.keras"
            intents = tf_keras_repairs(facts, reason) + (repair,)
            layered = _legacy_keras_fix(facts, name, intents)
            problems.append(Problem(
                name, Status.FAIL, f"{named} was made for Keras 2 as tf.keras, which is Keras 3 here",
                [f"{name} {release} and later import tf_keras instead (read from its wheel: {moved['source']})"],
                f"Upgrade {name} to {release} or later, which imports tf_keras itself, and install "
                f"{made_for.tf_keras_requirement(facts) or 'tf-keras'}, the tf-keras made for {tensorflow}: {named} "
                "predates that move, and no setting makes it work under Keras 3."
                + (f" {layered.advice}" if layered is not None else ""),
                layered.repairs if layered is not None else intents,
                layered.url if layered is not None else moved["source"], kind="needs-tf-keras"))
            continue
        if refused is not None:
            continue  # its own import check already says it is not made for this TensorFlow
        if not made_for.knows_releases(name, via_extras=True):
            continue
        # the companion table's row for this release (its Requires-Dist on TensorFlow, read from PyPI) says which
        # TensorFlow it is made for, whether or not this report recorded its metadata: the import the child would
        # have tried fails where it is made for another (issue 38, build 1); the dependencies check judges the pin
        recorded = "requires" in (requires_dist.first_copy(facts, name) or {})
        fits = companions_table.made_for(name, version, installed[1], requires_dist.marker_environment(facts),
                                         via_extras=True)
        basis = "the companion table's Requires-Dist of that release"
        if fits is None and name == "tf-keras":
            fits, basis = _tf_keras_in_step(version, installed[1]), "tf-keras's release line, in step with TensorFlow's"
        if fits is False:
            advice, repairs = _release_fix(facts, name, version, f"{named} is made for another TensorFlow")
            release = _table_release(name, version)
            # tf-keras is pure Python: as with its recorded pin (the dependencies check), a warning, unless tf.keras
            # itself is that tf-keras (TF_USE_LEGACY_KERAS): then tf.keras fails with it
            status = Status.WARN if name == "tf-keras" and not _legacy_keras_requested(facts) else Status.FAIL
            said = "" if recorded else "; its metadata was not recorded"
            problems.append(Problem(name, status, f"{named} was built for another TensorFlow than {tensorflow} "
                                    f"(judged from {basis}{said})",
                                    [f"its Requires-Dist: {', '.join(release.requires) if release else '?'}"],
                                    advice, repairs, release.source if release else None, kind="table"))
    return problems + later


def _keras2_layer_problem(facts: Facts, name: str, version: str) -> Optional[Problem]:
    """The tables' path to what the child sees as a layer's base class (`_layer_problem`): a release that imports
    tf_keras (tf_keras_users.toml, read from its wheel) and exports a Keras layer (companion_layers.toml:
    tensorflow_hub.KerasLayer) makes that layer a tf-keras layer, which a Keras 3 tf.keras model refuses, even with
    tf-keras installed (mediapipe-model-maker's environment: TensorFlow 2.19, hub 0.16.1, tf-keras 2.19, no
    TF_USE_LEGACY_KERAS). None without such a layer, without tf-keras (the needs-tf-keras finding says it all), or
    when tf.keras is not Keras 3 (before 2.16, or switched to tf-keras)."""
    layers = keras2_layers(name)
    if not layers or not _installed(facts).get("tf-keras") or not _keras3(facts) or not _keras3_by_tensorflow(facts):
        return None
    module, layer = layers[0]
    installed = made_for.installed_tensorflow(facts)
    tf_version = section(facts, "tensorflow").get("version") or (installed[1] if installed else None)
    reason = f"{module}.{layer} is a Keras 2 layer: tf.keras must be the tf-keras of {_tensorflow_words(facts)}"
    fix = experiment_remedies.use_remediation(facts, {"goal": {"module": module, "layer": layer}},
                                              () if installed_tf_keras_fits(facts) else tf_keras_repairs(facts, reason),
                                              tf_version)
    row = next(row for row in knowledge_rows("companion_layers", "layers")
               if canonical_name(str(row["distribution"])) == name and row["name"] == layer)
    keras = _installed(facts).get("keras")
    details = [f"{module}.{layer} subclasses tf_keras's Layer once tf.keras is Keras 3 (read from its source: "
               f"{row['source']}); tf.keras is {'Keras ' + keras if keras else 'Keras 3'}"]
    return Problem(module, Status.FAIL, f"{module}.{layer} is a layer of another Keras than tf.keras: a tf.keras model "
                   f"refuses it ({name} {version})", details, fix.advice, fix.repairs, fix.url, kind="keras2-layer")


def _import_check_problem(facts: Facts, name: str, version: str) -> tuple[Optional[Problem], bool]:
    """The release's own import-time check refuses the installed TensorFlow (read from its wheel,
    companion_import_checks.toml, else the curated rows): what the import does first, before it reaches any
    tf_keras it needs (tensorflow-probability 0.25 raises under TensorFlow 2.16 whether tf-keras is there or
    not). (None, False) when the check accepts it or nothing is known of one; the flag: the check raises (the
    import stops there), rather than warns."""
    installed = made_for.installed_tensorflow(facts)
    if installed is None or accepts_at_import(name, version, installed[1]) is not False:
        return None, False
    tensorflow = _tensorflow_words(facts)
    named = f"{name} {version}"
    generated = generated_import_check(name, version)
    enforced = generated["enforced"] == "raises" if generated else companions_table.import_check(name, version)
    # a release whose own Requires-Dist names another TensorFlow is built against it (its compiled ops
    # break on use) even where its import check only warns: TF-DF, not tensorflow-addons (no pin)
    pinned = not enforced and companions_table.made_for(
        name, version, installed[1], requires_dist.marker_environment(facts)) is False
    status = Status.FAIL if enforced or pinned else Status.WARN
    summary = (f"{named} refuses {tensorflow} when imported (its import-time check, read from its source)"
               if enforced else
               f"{named} was built for another TensorFlow than {tensorflow} (its Requires-Dist; its "
               "import only warns)" if pinned else
               f"{named} warns at import that it does not support {tensorflow}")
    advice, repairs = _release_fix(facts, name, version, f"{named} is not made for {tensorflow}")
    curated = companions_table.import_check(name, version)
    source = (generated["source"] if generated else curated.source if curated
              else next((row["source"] for row in knowledge_rows("companion_imports", "import_requirements")
                         if row["distribution"] == name and row["release"] == version), None))
    accepts = (" or ".join(generated["any_of"]) if generated and generated["any_of"]
               else str(_import_specifier(name, version)))
    read_at = f" (read from {generated['read_at']} of its wheel)" if generated else ""
    details = [f"what {named} accepts: TensorFlow {accepts}{read_at}"]
    if pinned:
        release = _table_release(name, version)
        details.append(f"its Requires-Dist: {', '.join(release.requires) if release else '?'}")
    return Problem(name, status, summary, details, advice, repairs, source, kind="import-check"), bool(enforced)


def _table_release(name: str, version: str) -> Any:
    """The companion table's row of exactly this release (its Requires-Dist, its source), or None."""
    return next((r for r in companions_table.releases(name) if r.version == version), None)


def _layer_problem(facts: Facts, entry: Mapping[str, Any]) -> Optional[Problem]:
    """A Keras layer the companion exports subclasses another Keras than tf.keras (tensorflow_hub.KerasLayer,
    a tf-keras layer, under a Keras 3 tf.keras): a tf.keras model refuses it. The offline experiments
    reproduce that on use and try tf.keras routed to tf-keras (tfdoctor/remedies/experiments.py)."""
    module = str(entry.get("module"))
    layers = [layer for layer in entry.get("keras_layers") or () if layer.get("tf_keras_layer") is False]
    if entry.get("status") != "ok" or not layers:
        return None
    layer = layers[0]
    name = f"{module}.{layer.get('name')}"
    distribution, installed = distribution_of(facts, module)
    keras = (section(facts, "tensorflow").get("keras") or {})
    details = [f"{name} subclasses {layer.get('base_module')}.Layer; tf.keras is "
               f"{'Keras ' + str(keras.get('version')) if keras.get('version') else 'another Keras'}"]
    proof = experiment_facts.proof_for(facts, "use", module)
    failure = (proof or {}).get("failure") or {}
    error = failure.get("error") or {}
    if error:
        details.insert(0, f"error on use: {error.get('type')}: {tensorflow_child.first_line(error.get('message'), 300)}")
    wanted_reason = f"{name} is a Keras 2 layer: tf.keras must be the tf-keras of {_tensorflow_words(facts)}"
    tf_keras = tf_keras_repairs(facts, wanted_reason) if (
        not installed_tf_keras_fits(facts)) else ()
    fix = experiment_remedies.use_remediation(facts, proof or {"goal": {"module": module, "layer": layer.get("name")}},
                                              tf_keras, section(facts, "tensorflow").get("version"))
    if proof and proof.get("works"):
        summary = f"{name} fails in a tf.keras model: {experiment_remedies.proven_summary(proof)}"
        details.insert(0, experiment_remedies.trials_line(facts))
    elif error:
        summary = f"{name} fails in a tf.keras model (proven by experiment: {error.get('type')})"
    else:
        summary = f"{name} is a layer of another Keras than tf.keras: a tf.keras model refuses it"
    named = f"{distribution} {installed}" if installed else distribution
    return Problem(module, Status.FAIL, f"{summary} ({named})", details, fix.advice, fix.repairs, fix.url)


def installed_tf_keras_fits(facts: Facts) -> bool:
    """tf-keras is installed, of the installed TensorFlow's release (tf-keras is released in step)."""
    from tfdoctor.facts.tensorflow_distributions import first_version

    installed = made_for.installed_tensorflow(facts)
    tf_keras = first_version(facts, "tf-keras")
    tf_version = section(facts, "tensorflow").get("version") or (installed[1] if installed else None)
    return bool(tf_keras and tf_version and tf_keras.split(".")[:2] == str(tf_version).split(".")[:2])


def _crashed_module(tf: Mapping[str, Any]) -> Optional[str]:
    """The companion whose import the child died or hung in (its last stage), or None."""
    stage = str(tf.get("stage") or "")
    if stage.startswith("companion:") and tf.get("status") in ("crashed", "timed_out"):
        return stage.split(":", 1)[1]
    return None


def _tf_keras_in_step(version: str, tensorflow_version: str) -> Optional[bool]:
    """A tf-keras release the table does not hold: tf-keras is released in step with TensorFlow, one release line per
    TensorFlow minor (tf-keras 2.21.x requires tensorflow<2.22,>=2.21), so its minor says which TensorFlow it is
    made for. None when a version cannot be read."""
    ours, theirs = requires_dist.version_of(version), requires_dist.version_of(tensorflow_version)
    if ours is None or theirs is None:
        return None
    return (ours.major, ours.minor) == (theirs.major, theirs.minor)


def _legacy_keras_requested(facts: Facts) -> bool:
    """TF_USE_LEGACY_KERAS is set true: tf.keras is then tf-keras itself."""
    from tfdoctor.facts import tensorflow_pins

    legacy = tensorflow_pins.legacy_keras()
    return str(section(facts, "environment").get(legacy["variable"]) or "") in legacy["true_values"]


def _static_outcome(facts: Facts, why: str, listed: bool = True) -> Outcome:
    """The verdict from the tables alone, when the child's imports of the companions are not recorded: their
    problems; a pass when they judged every installed companion and found none, or (`listed`: the report lists
    every distribution, and the child did not end before the companions for a reason of its own) none is installed;
    else the skip."""
    problems = [_with_reach(facts, p) for p in static_problems(facts)]
    if not problems:
        judged, unknown = _judged_by_tables(facts)
        if judged and not unknown:
            return Outcome.ok(f"{', '.join(judged)} fit{'s' if len(judged) == 1 else ''} {_tensorflow_words(facts)} "
                              "(judged from the companion tables)",
                              f"Judged from the installed metadata and the companion tables: {why}.",
                              tensorflow=_tensorflow_words(facts), judged="tables")
        if not judged and not unknown and requires_dist.complete_record(facts) and listed:
            # the report lists every distribution (its collector counted them) and none is a companion to judge
            return Outcome.ok("no companion of TensorFlow is installed (judged from the installed distributions)",
                              f"Judged from the installed metadata and the companion tables: {why}.",
                              tensorflow=_tensorflow_words(facts), judged="tables")
        return Outcome.skip(why)  # nothing the tables know of: the same skip as before they were read
    return _outcome(problems, [f"Judged from the installed metadata and the companion tables: {why}."],
                    {"tensorflow": _tensorflow_words(facts), "judged": "tables"})


def _judged_by_tables(facts: Facts) -> tuple[list[str], list[str]]:
    """(installed companions a table judged fit for the installed TensorFlow, those no table can judge)."""
    from tfdoctor.facts.published_requires import with_published

    installed = made_for.installed_tensorflow(facts)
    pinned, _ = with_published(facts)
    environment = requires_dist.marker_environment(facts)
    judged: list[str] = []
    unknown: list[str] = []
    for name, version in _installed(facts).items():
        if name not in companions_table.COMPANIONS or name == "tf-keras" and not _keras3(facts) \
                or installed is None or name in companions_table.DECLARED_BY_TENSORFLOW:
            continue
        if any(requires_dist.is_tensorflow_build(who) for who, _, _ in requires_dist.declared_pins(pinned, name)):
            continue  # TensorFlow's own Requires-Dist ranges it: the dependencies check's to judge
        named = f"{name} {version}"
        fits = (accepts_at_import(name, version, installed[1]),
                companions_table.made_for(name, version, installed[1], environment, via_extras=True),
                _tf_keras_needs_met(facts, name, version))
        (judged if any(f is True for f in fits) and not any(f is False for f in fits) else unknown).append(named)
    return judged, unknown


def _tf_keras_needs_met(facts: Facts, name: str, version: str) -> Optional[bool]:
    """True where what the tables know of a release that declares no TensorFlow (tensorflow-hub) is met here: it
    imports tf_keras (tf_keras_users.toml) and the tf-keras made for this TensorFlow is installed, and its Keras
    layers (companion_layers.toml) fit tf.keras (tf.keras is tf-keras, or not Keras 3). None where the tables say
    nothing of it; static_problems says what is unmet."""
    if tf_keras_user(name, version) is None or not installed_tf_keras_fits(facts):
        return None
    if keras2_layers(name) and _keras3(facts) and _keras3_by_tensorflow(facts):
        return False
    return True


def _outcome(problems: list[Problem], notes: list[str], evidence: dict[str, Any]) -> Outcome:
    problems.sort(key=lambda p: p.status is not Status.FAIL)
    first = problems[0]
    details = list(first.details)
    for other in problems[1:]:
        details.append(f"Also ({other.status.value}): {other.summary}")
        details.extend(other.details)
    repairs: list[Repair] = []
    for problem in problems:
        repairs += [r for r in problem.repairs if r not in repairs]
    advice = " ".join(dict.fromkeys(p.advice for p in problems))
    fix = Remediation(advice, (), first.url or PIP_URL, tuple(repairs))
    evidence["problems"] = [{"module": p.module, "status": p.status.value, "summary": p.summary} for p in problems]
    return Outcome(first.status, first.summary, tuple(details + notes), fix, evidence)


def _with_reach(facts: Facts, problem: Problem) -> Problem:
    """A failing companion's advice says where it can work at all (no wheel for this platform: none of its releases
    can help; WSL2 on Windows), and, when no release made for the installed TensorFlow is known (or the report does
    not say which TensorFlow that is), the TensorFlow its newest release is made for (issue 29, round 2)."""
    distribution = distribution_of(facts, problem.module)[0]
    environment = requires_dist.marker_environment(facts)
    nowhere = companion_reach.no_wheel_here(distribution, environment)
    if nowhere:
        return dataclasses.replace(problem, advice=nowhere, repairs=())
    installed = made_for.installed_tensorflow(facts)
    elsewhere = companion_reach.no_wheel_for_tensorflow_here(distribution, installed[1], environment) if (
        installed and not problem.repairs) else None
    if elsewhere:
        return dataclasses.replace(problem, advice=f"{problem.advice} {elsewhere}")
    newest = companion_reach.newest_made_for(distribution) if not problem.repairs else None
    if newest and newest not in problem.advice:
        return dataclasses.replace(problem, advice=f"{problem.advice} ({newest}.)")
    return problem


@check("companions", "TensorFlow's companions import",
       uses=("distributions", "tensorflow", "python", "environment", "experiments"), tags=("install",))
def companions(facts: Facts) -> Outcome:
    """tensorflow-text, -probability, keras-hub, ... import beside this TensorFlow

    the companions of TensorFlow as your code imports them (tf-keras, tensorflow-text, -io, -probability,
    -decision-forests, -addons, -hub, -model-optimization, -datasets, keras-hub/-nlp/-cv): the child imports each
    installed one after TensorFlow and tf.keras, guarded and timed, and records its exception, warnings and log; a
    companion built for another TensorFlow ("undefined symbol", Keras 2 internals), one that refuses this TensorFlow
    at import (tensorflow-probability raises, tensorflow-addons warns: what each release checks is read from its
    tagged source), one missing tf-keras, or one that crashes the interpreter fails, naming the companion at fault
    (keras-hub failing in tensorflow-text's library is tensorflow-text's) and its release made for the installed
    TensorFlow. Without the child's imports (a saved report, a failed TensorFlow import) it judges from the tables:
    a release whose import-time check refuses the installed TensorFlow (`companion_import_checks.toml`, read from
    the wheels), one the companion table's row says is made for another TensorFlow, its Requires-Dist recorded or not
    (by its extras' TensorFlow pin where that is all it names, as tensorflow-io does; a tf-keras release the table
    lacks by its minor, in step with TensorFlow's; a failure, or for tf-keras a warning unless TF_USE_LEGACY_KERAS
    makes it tf.keras; never for a companion TensorFlow's own Requires-Dist ranges, such as
    tensorflow-io-gcs-filesystem), saying which it used; and always, a library whose wheel
    imports tf_keras (`tf_keras_users.toml`: tensorflow-hub 0.16+, -model-optimization 0.8+, -probability 0.24+,
    -decision-forests 1.9+) installed under Keras 3 without tf-keras fails with the tf-keras made for the installed
    TensorFlow, as does such a library failing to import with an unknown error under Keras 3 without tf-keras. A
    partial list naming only a shim reads as its real build at the shim's version. The child's record that
    TensorFlow imported counts where a report lists no TensorFlow; a failing companion no release of which has a
    wheel for this platform is told so (WSL2 on Windows), and where releases are made for the installed TensorFlow
    but none has a wheel here, that is said (tensorflow-text 2.18 on Windows: WSL2); where no release is made for
    it, the advice names the TensorFlow its newest release is made for (`remedies/companion_reach.py`). A release
    whose own Requires-Dist pins another TensorFlow fails even where its import check only warns (TF-DF: compiled
    ops); an import check that refuses this TensorFlow counts for an import the child recorded ok too (a warning
    where the pins admit it); without the child, a report whose companions the tables all judge fit passes (`judged:
    tables`), one they cannot judge skips; an import that fails on a module its provider no longer has
    (`module_providers.toml`: pkg_resources, which tensorflow-hub imports without declaring setuptools) gets the
    provider's releases that have it, and a release older than its library's move to tf_keras (tensorflow-hub 0.15)
    is upgraded past it: each need found is in the one repair. A library in no table is judged by what its own files
    import (`distributions[].imports`, read through its RECORD and cached by its hash: issue 38): one that needs
    tf_keras (retina-face 0.0.17) is a tf_keras user as above, "read from its files"; one whose installed release
    ships no TensorFlow code while an earlier one did (transformers 5; the earlier ones from `tf_keras_users.toml`)
    warns where TensorFlow is the only framework installed (no torch, jax, flax), with the last release that had
    it (and its tf-keras) as the plan, keeping it for PyTorch or JAX said as the other choice
    """
    tf = section(facts, "tensorflow")
    # the child's own record that TensorFlow imported counts where the report lists no TensorFlow distribution
    # (a saved report listing some distributions, or none): its companions' imports are judged all the same
    if made_for.installed_tensorflow(facts) is None and not tf.get("imported") and not is_recorded(facts, "distributions"):
        return Outcome.skip("not recorded: distributions", missing=["distributions"])
    if tf.get("status") == "not_installed" or (made_for.installed_tensorflow(facts) is None and not tf.get("imported")):
        return Outcome.skip("TensorFlow is not installed (see tensorflow-install)")
    if not tf:
        return _static_outcome(facts, "not recorded: tensorflow")
    if not tf.get("imported"):
        return _static_outcome(facts, "TensorFlow did not import (see tensorflow-import)", listed=False)
    entries = tf.get("companions")
    crashed = _crashed_module(tf)
    if entries is None:
        if crashed is None:
            return _static_outcome(facts, "the companions' imports were not recorded (the child ended before them, or an "
                                          "older report)")
        entries = [{"module": crashed, "status": "failed"}]
    entries = [e for e in entries if isinstance(e, Mapping) and e.get("module")]
    modules = [str(e["module"]) for e in entries]
    evidence: dict[str, Any] = {"tensorflow": _tensorflow_words(facts), "judged": "import",
                                "companions": {str(e["module"]): e.get("status") for e in entries}}
    problems: list[Problem] = []
    notes: list[str] = []
    for entry in entries:
        fate = tensorflow_child.fate(tf) if entry.get("module") == crashed else None
        problem = _problem(facts, entry, modules, fate) or _layer_problem(facts, entry)
        if problem is not None:
            problems.append(problem)
        elif entry.get("status") == "skipped" and entry.get("module") != crashed:
            notes.append(f"{entry['module']} not imported: {entry.get('reason') or 'skipped'}")
    problems = [_with_reach(facts, p) for p in problems]
    flagged = {distribution_of(facts, p.module)[0] for p in problems}
    # what an import does not show: a library of Keras 2 layers installed under Keras 3 without tf-keras, and a
    # release whose own import-time check refuses this TensorFlow with a warning the child does not match (TF-DF's
    # "is compatible with the following TensorFlow Versions"); a table verdict is left to the recorded Requires-Dist
    problems += [p for p in static_problems(facts, flagged)
                 if p.kind in ("needs-tf-keras", "import-check", "no-tensorflow-code")]
    if not problems:
        imported = [f"{e['module']} {e.get('version') or ''}".strip() for e in entries if e.get("status") == "ok"]
        if not entries:
            return Outcome.ok("no companion of TensorFlow is installed", **evidence)
        summary = f"{', '.join(imported)} import{'s' if len(imported) == 1 else ''} with {_tensorflow_words(facts)}" \
            if imported else "no companion was imported"
        return Outcome.ok(summary, *notes, **evidence)
    return _outcome(problems, notes, evidence)
