"""Modules that libraries import without declaring their provider, read from knowledge/module_providers.toml
(issue 29): pkg_resources, which setuptools 82 removed, imported by tensorflow-hub and by every tensorboard
before 2.21. Two readers: a module an import error says is missing whose provider is absent or at a release
without it (the repair installs the releases that have it), and an installed importer whose provider is so
before anything is imported (the `tensorboard` command breaks while TensorFlow itself imports).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tfdoctor.facts import Facts, canonical_name, requires_dist
from tfdoctor.facts.import_causes import missing_modules
from tfdoctor.knowledge import rows as knowledge_rows


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
    the report lists every distribution (a partial list says nothing of what it leaves out)."""
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
    return found
