"""Windows' 260-character path limit against TensorFlow's deepest file (pure; issue 29, part 5).

pip writes every file of a wheel below site-packages; while long paths are off (the collector reads
LongPathsEnabled into facts["os"]["windows"]["long_paths_enabled"]), a file whose full path is longer than
259 characters cannot be written and the install stops half done. How deep TensorFlow's files go is
knowledge read from what the wheel wrote (signatures.toml [[deepest_wheel_path]], with its source)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from tfdoctor.facts import host_system, section
from tfdoctor.knowledge import rows as knowledge_rows

# MAX_PATH is 260 characters including the terminating NUL.
MAX_PATH_CHARACTERS = 259


@dataclass(frozen=True)
class LongPathShortfall:
    site_packages: str
    deepest: int  # characters of the wheel's deepest file below site-packages
    source: str

    @property
    def needed(self) -> int:
        return len(self.site_packages) + 1 + self.deepest

    def describe(self) -> str:
        return (f"site-packages is {len(self.site_packages)} characters long ({self.site_packages}), and TensorFlow's "
                f"wheel holds files {self.deepest} characters below it: {self.needed} characters, past Windows' limit "
                f"of {MAX_PATH_CHARACTERS} while long paths are off")


def deepest_wheel_path(distribution: str = "tensorflow", platform: str = "windows") -> Optional[Mapping[str, Any]]:
    return next((row for row in knowledge_rows("signatures", "deepest_wheel_path")
                 if row.get("distribution") == distribution and row.get("platform") == platform), None)


def install_site(facts: Mapping[str, Any]) -> Optional[str]:
    """The site-packages directory pip installs into (Windows' site.getsitepackages() also lists the prefix)."""
    paths = [str(p) for p in section(facts, "python").get("site_packages") or () if p]
    named = [p for p in paths if p.rstrip("\\/").lower().endswith("site-packages")]
    return max(named or paths, key=len, default=None)


def long_path_shortfall(facts: Mapping[str, Any]) -> Optional[LongPathShortfall]:
    """Why installing TensorFlow here would stop at Windows' path limit, or None: not Windows, long paths on
    (or not recorded), or a site-packages path short enough for the deepest file."""
    if host_system(facts) != "Windows":
        return None
    windows = section(section(facts, "os"), "windows")
    if windows.get("long_paths_enabled") is not False:
        return None
    site, deepest = install_site(facts), deepest_wheel_path()
    if not site or not deepest:
        return None
    shortfall = LongPathShortfall(site, int(deepest["length"]), str(deepest["source"]))
    return shortfall if shortfall.needed > MAX_PATH_CHARACTERS else None
