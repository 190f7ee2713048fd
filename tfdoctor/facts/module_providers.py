"""Modules that libraries import without declaring their provider, read from knowledge/module_providers.toml
(issue 29): pkg_resources, which setuptools 82 removed, imported by tensorflow-hub and by every tensorboard
before 2.21. Two readers: a module an import error says is missing whose provider is absent or at a release
without it (the repair installs the releases that have it), and an installed importer whose provider is so
before anything is imported (the `tensorboard` command breaks while TensorFlow itself imports). And, from the
artifacts alone, a library whose own files need a module of TensorFlow's stack (`distributions[].imports.stack_modules`,
read through its RECORD: keras-tuner 1.4.8's tuner.py imports tensorboard in every trial) that no installed
distribution provides and its Requires-Dist does not declare: TensorFlow up to 2.20 brought tensorboard, 2.21 does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tfdoctor.facts import Facts, canonical_name, made_for, requires_dist
from tfdoctor.facts.import_causes import missing_modules
from tfdoctor.knowledge import rows as knowledge_rows


@dataclass(frozen=True)
class StackModule:
    """A module of TensorFlow's stack whose needed imports collect/library_imports.py records (STACK_MODULES there):
    the distributions that provide it (the first is the one to install, released in step with TensorFlow), why a
    library may import it undeclared, and where that is seen."""

    providers: tuple[str, ...]
    why: str
    source: str


STACK_PROVIDERS: Mapping[str, StackModule] = {
    "tensorboard": StackModule(("tensorboard", "tb-nightly"), "which TensorFlow up to 2.20 required and 2.21 does not",
                               # 2.20.0's Requires-Dist has tensorboard~=2.20.0; 2.21.0's has no tensorboard
                               "https://pypi.org/project/tensorflow/2.21.0/"),
}


@dataclass(frozen=True)
class MissingProvider:
    """A module that is missing (or would be), imported without its provider being declared, and the releases of
    the provider that have it."""

    module: str
    distribution: str
    provided_by: str  # the requirement that puts it back ("setuptools<82")
    installed: Optional[str]  # the provider's installed version, None when it is absent
    source: str

    def lack(self) -> str:
        """How the provider here lacks the module, in words."""
        if self.installed:
            return f"{self.distribution} {self.installed}, installed here, has not"
        return f"{self.distribution} is not installed"


@dataclass(frozen=True)
class StrandedImporter:
    """An installed release that imports a module its provider here does not have (tensorboard 2.20.0 beside
    setuptools 84: the `tensorboard` command fails)."""

    name: str
    version: str
    uses: str  # what fails, in words ("the `tensorboard` command")
    provider: MissingProvider


def _provider(facts: Facts, row: Mapping[str, Any]) -> Optional[MissingProvider]:
    """The provider row's state here: None when the installed provider has the module."""
    wanted = Requirement(row["provided_by"])
    copy = requires_dist.first_copy(facts, wanted.name) or {}
    installed = str(copy["version"]) if copy.get("version") else None
    version = requires_dist.version_of(installed)
    if version is not None and SpecifierSet(str(wanted.specifier)).contains(version, prereleases=True):
        return None
    return MissingProvider(str(row["module"]), canonical_name(wanted.name), str(row["provided_by"]), installed,
                           str(row["source"]).split(" ", 1)[0])


def missing_providers(facts: Facts, error: Optional[Mapping[str, Any]]) -> list[MissingProvider]:
    """The missing modules of the error whose provider is absent here, or installed at a release without them."""
    found = []
    for module in missing_modules(error):
        for row in knowledge_rows("module_providers", "providers"):
            if row["module"] == module.split(".")[0]:
                provider = _provider(facts, row)
                found += [provider] if provider else []
    return found


def stranded_importers(facts: Facts) -> list[StrandedImporter]:
    """Installed releases that import a module whose provider here lacks it. An absent provider counts only where
    the report lists every distribution (a partial list says nothing of what it leaves out). Then those the
    artifacts alone show: `undeclared_stack_importers`."""
    providers = {row["module"]: row for row in knowledge_rows("module_providers", "providers")}
    found = []
    for row in knowledge_rows("module_providers", "importers"):
        copy = requires_dist.first_copy(facts, row["distribution"]) or {}
        version = requires_dist.version_of(copy.get("version"))
        if version is None or not SpecifierSet(row["releases"]).contains(version, prereleases=True):
            continue
        provider = _provider(facts, providers[row["module"]])
        if provider is None or (provider.installed is None and not requires_dist.complete_record(facts)):
            continue
        found.append(StrandedImporter(canonical_name(row["distribution"]), str(copy["version"]), str(row["uses"]),
                                      provider))
    return found + undeclared_stack_importers(facts)


def undeclared_stack_importers(facts: Facts) -> list[StrandedImporter]:
    """Installed libraries whose own files need a module of TensorFlow's stack (STACK_PROVIDERS: tensorboard, read
    through their RECORD, an import inside an ImportError fallback not counted) that no installed distribution
    provides (by name or recorded top-level module) and their Requires-Dist does not declare outside extras (a
    declared one missing is an unmet pin). Only where the report lists every distribution: a partial list says
    nothing of what it leaves out. The provider to install is the release line of the installed TensorFlow's minor
    where the companion table holds one (`tensorboard~=2.21.0`), else the bare name."""
    if not requires_dist.complete_record(facts):
        return []
    entries = [e for e in facts.get("distributions") or () if isinstance(e, Mapping) and e.get("name")]
    wanted = [(e, m, lines) for e in entries if isinstance(e.get("imports"), Mapping)
              and isinstance(e["imports"].get("stack_modules"), Mapping)
              for m, lines in e["imports"]["stack_modules"].items()
              if m in STACK_PROVIDERS and isinstance(lines, list) and lines]
    if not wanted:
        return []  # most reports: no library needs one, and nothing else is walked
    installed = {canonical_name(str(e["name"])) for e in entries}
    provided = {str(m) for e in entries for m in e.get("top_level") or () if str(m) in STACK_PROVIDERS}
    found: list[StrandedImporter] = []
    for entry, module, lines in wanted:
        name = canonical_name(str(entry["name"]))
        stack = STACK_PROVIDERS[module]
        providers = stack.providers
        if module in provided or installed.intersection(providers) or name in providers:
            continue
        if (requires_dist.declared_names(facts, name) or set()).intersection(providers):
            continue  # a declared provider that is missing: the unmet pin says so
        requirement = made_for.in_step_requirement(facts, providers[0])
        if requirement is None:
            continue
        where = ", ".join(str(line) for line in lines[:2])
        found.append(StrandedImporter(
            name, str(entry.get("version") or "?"),
            f"its code that imports it ({where}, read from its files; {name} does not declare {providers[0]}, "
            f"{stack.why})",
            MissingProvider(module, providers[0], requirement[0], None, requirement[1] or stack.source)))
    return found
