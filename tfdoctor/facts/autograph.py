"""AutoGraph's conversion of Python control flow, as the TensorFlow child recorded it (issue 29: a dependency
inside its pin that breaks on use), and the distributions suspected of breaking it. Pure functions of the facts.

The child converts a function with an `if` and a `for` over tensors with tf.autograph.to_graph, which raises
the conversion error tf.function only logs ("AutoGraph could not transform ... and will run it as-is"), and
on failure records the files of the failing frames with the modules each imports at its top level
(child/autograph_trace.py). Those frames are TensorFlow's own (pyct/transformer.py, static_analysis/
activity.py ...), so owners of the frames alone name only TensorFlow; what the failing code imports from
outside TensorFlow is what an expert suspects (gast 0.2.2 under TensorFlow 2.21, inside its `gast>=0.2.1`).
Suspects are ranked by the number of failing frames whose files import them; each one's candidate repair is
the release TensorFlow's CI tested (knowledge/tested_locks.toml, when generated), else a release newer than
the installed one inside every requirer's specifier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from tfdoctor.facts import Facts, canonical_name, owners, requires_dist, section, tested_locks
from tfdoctor.facts.import_suspects import candidate


@dataclass(frozen=True)
class Suspect:
    name: str
    version: str
    frames: int  # failing frames whose files import it
    files: tuple[str, ...]  # those files
    pins: tuple[tuple[str, Optional[str], str], ...]  # (requirer, its version, specifier) naming it
    requirement: str  # the candidate repair
    tested: Optional[str] = None  # the release TensorFlow's CI tested, when the table has it

    def inside(self) -> str:
        """'inside tensorflow-cpu 2.21.0's gast!=0.5.0,...,>=0.2.1' (or 'required by nothing installed')."""
        if not self.pins:
            return "no installed distribution declares it"
        return "inside " + ", ".join(f"{who} {version}'s {self.name}{spec}" if version else f"{who}'s {self.name}{spec}"
                                     for who, version, spec in self.pins)

    def describe(self) -> str:
        modules = ", ".join(path.replace("\\", "/").rsplit("/", 1)[-1] for path in self.files[:3])
        more = f" and {len(self.files) - 3} more" if len(self.files) > 3 else ""
        tested = f"; TensorFlow's CI tested {self.tested}" if self.tested else ""
        return (f"{self.name} {self.version} ({self.inside()}, but the AutoGraph code that fails imports it: "
                f"{modules}{more}{tested})")


def recorded(facts: Facts) -> Optional[Mapping[str, Any]]:
    found = section(facts, "tensorflow").get("autograph")
    return found if isinstance(found, Mapping) else None


def failure(facts: Facts) -> Optional[Mapping[str, Any]]:
    """The recorded conversion failure, None when AutoGraph converted (or was not tried)."""
    found = recorded(facts)
    return found if found is not None and found.get("status") == "failed" else None


def cause(failed: Mapping[str, Any]) -> str:
    """The innermost error's message (the ValueError under ConversionError), on one line."""
    error = found if isinstance(found := failed.get("error"), Mapping) else {}
    causes = [c for c in error.get("causes") or () if isinstance(c, Mapping) and c.get("message")]
    chosen = causes[-1] if causes else error
    text = " ".join(str(chosen.get("message") or "").split())
    kind = str(chosen.get("type") or "").rsplit(".", 1)[-1]
    return f"{kind}: {text}" if kind else text


def suspects(facts: Facts, lock_rows: Optional[Iterable[Mapping[str, Any]]] = None) -> list[Suspect]:
    """Distributions outside TensorFlow that the failing frames' files import, most frames first."""
    failed = failure(facts)
    if failed is None:
        return []
    modules = owners.module_owners(facts)
    frames: dict[str, int] = {}
    files: dict[str, list[str]] = {}
    entries: dict[str, Mapping[str, Any]] = {}
    for item in failed.get("files") or ():
        if not isinstance(item, Mapping) or not item.get("file"):
            continue
        path = str(item["file"])
        frame_owner = owners.owner_of(facts, path)
        own = canonical_name(str(frame_owner.get("name"))) if frame_owner else None
        for module in item.get("imports") or ():
            entry = modules.get(str(module))
            if entry is None:  # the standard library, or nothing installed: not a distribution to repair
                continue
            name = canonical_name(str(entry.get("name")))
            if name == own or requires_dist.is_tensorflow_build(name) or name == "tfdoctor":
                continue
            entries[name] = entry
            frames[name] = frames.get(name, 0) + int(item.get("frames") or 1)
            files.setdefault(name, []).append(path)
    behind = {b.name: b for b in tested_locks.behind_ci(facts, lock_rows)}
    found = []
    for name in sorted(frames, key=lambda n: (-frames[n], -len(files[n]), n)):
        installed = str(entries[name].get("version") or "")
        pins = tuple(requires_dist.declared_pins(facts, name))
        requirement, tested = candidate(name, installed, pins, behind)
        found.append(Suspect(name, installed, frames[name], tuple(files[name]), pins, requirement, tested))
    return found
