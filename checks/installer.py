"""Can this environment's installer install the wheels it needs?

The environment declares what it needs: the WHEEL `Tag:` lines and Requires-Python of its installed
TensorFlow-family distributions (recorded by the integrity child), and `pip install tensorflow` reaches
for the newest TensorFlow wheel of the platform (a curated tag, tfdoctor/environment/pip.py). A pip older
than a tag's first supporting release (manylinux_x_y and macOS 11+ tags: pip 20.3) finds no such wheel:
`pip install tensorflow==2.21.0` says "No matching distribution found" (TensorFlow has no sdist), a plain
`pip install tensorflow` quietly takes an older release, and a distribution with an sdist is built
from source instead (measured: pip 20.2.4 reinstalling ml-dtypes 0.6.0 started compiling NumPy). The rules themselves live in
tfdoctor.environment.pip, so the repair plan upgrades such a pip before any of its pip steps.

Verdicts: fail when pip cannot reinstall an installed TensorFlow-family wheel (every repair would fail)
or cannot install the missing TensorFlow; warn when it only cannot reach the newest TensorFlow (nothing
installed needs a newer pip yet, but an upgrade of TensorFlow would stop short); warn when the
environment has no pip at all; pass otherwise. uv-managed environments install with uv, not pip.
"""

from __future__ import annotations

from packaging.version import Version

from tfdoctor.checking.registry import Facts, check
from tfdoctor.environment.pip import installer_for, pip_needs, pip_too_old, pip_version
from tfdoctor.facts import distributions, section
from tfdoctor.facts.build_names import TENSORFLOW_BUILDS
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair

ENSUREPIP_URL = "https://docs.python.org/3/library/ensurepip.html"


def _tensorflow_installed(facts: Facts) -> bool:
    return any(distributions(facts, name) for name in TENSORFLOW_BUILDS)


def _others(facts: Facts) -> list[str]:
    """The other installers that manage this environment, as notes."""
    notes = []
    conda = section(facts, "installers").get("conda")
    if conda:
        notes.append(f"conda {conda} manages this environment (conda-meta); TensorFlow comes from pip here too")
    return notes


@check(
    "installer",
    "Installer capability",
    needs=("installers",),
    uses=("python", "distributions", "os"),
    tags=("install",),
    doc_url="https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/",
)
def installer_capability(facts: Facts) -> Outcome:
    """pip (or conda, uv) is new enough for the wheels the environment needs

    the target's pip (and conda, uv) against what its wheels need: the WHEEL tags and Requires-Python of the
    installed TensorFlow family, and the newest TensorFlow wheel's tag (manylinux_2_27 and macOS 11+ tags need pip
    20.3); too old: the plan upgrades pip before any pip step
    """
    installer = installer_for(facts)
    pip = pip_version(facts)
    needs = pip_needs(facts)
    newest = needs[0] if needs else None
    evidence = {"pip": pip, "kind": installer.kind,
                "needs": [{"pip": n.pip, "distribution": n.distribution, "reason": n.reason} for n in needs[:5]]}
    # uv's or pixi's own resolver, or pip only with PEP 668's flag, which the plan passes: the installer's own
    # words (tfdoctor/environment/installers/), one policy with the plan's spelling
    note = installer.installer.capability_note(section(facts, "python"))
    if note:
        return Outcome.ok(note, *([f"pip {pip} is also installed"] if pip and not installer.uses_pip else []),
                          **evidence)
    if pip is None:
        return Outcome.warn(
            "No pip in this environment: every `python -m pip` command fails with 'No module named pip'",
            *_others(facts),
            fix=Remediation("Install pip into this environment from the Python's own ensurepip, then upgrade it.",
                            url=ENSUREPIP_URL,
                            repairs=(Repair.upgrade_pip("there is no pip in this environment: every pip step needs one",
                                                        missing=True),)),
            **evidence)
    short = pip_too_old(facts)
    if short is None:
        reason = f" (newest need: pip {newest.pip}, for {newest.distribution})" if newest else ""
        return Outcome.ok(f"pip {pip} installs every wheel this environment needs{reason}",
                          *([f"{newest.distribution}: {newest.reason}"] if newest else []), *_others(facts),
                          **evidence)
    upgrade = Remediation(f"Upgrade pip to {short.pip} or newer first (the plan's first step takes the newest); "
                          "the plan's other steps come after it.", url=short.url,
                          repairs=(Repair.upgrade_pip(f"pip {pip} cannot install {short.distribution}'s wheel "
                                                      f"({short.reason}): pip {short.pip} or newer can",
                                                      minimum=short.pip),))
    unmet_installed = [n for n in needs if n.installed and Version(pip) < Version(n.pip)]
    if unmet_installed:
        need = unmet_installed[0]
        return Outcome.fail(
            f"pip {pip} cannot install {need.distribution}'s wheel ({need.reason} need pip {need.pip} or newer): "
            "a reinstall or repair finds no wheel for it (pip builds the source instead where there is one; "
            "TensorFlow has none: 'No matching distribution found')",
            *[f"Also needs pip {n.pip}: {n.distribution} ({n.reason})" for n in unmet_installed[1:4]],
            *_others(facts),
            fix=upgrade, **evidence)
    if not _tensorflow_installed(facts):
        return Outcome.fail(
            f"pip {pip} cannot install {short.distribution} ({short.reason} need pip {short.pip} or newer): "
            "`pip install tensorflow` finds no wheel or an older TensorFlow",
            *_others(facts), fix=upgrade, **evidence)
    return Outcome.warn(
        f"pip {pip} can reinstall what is installed but not {short.distribution} ({short.reason} need pip "
        f"{short.pip} or newer): an upgrade of TensorFlow would stop at an older release",
        *_others(facts), fix=upgrade, **evidence)

