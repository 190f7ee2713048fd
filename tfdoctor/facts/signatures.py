"""Failure signatures: known error texts (and fatal signals) mapped to a diagnosis and its fix.

The rows live in tfdoctor/knowledge/signatures.toml; this module only matches them, purely, against
facts["tensorflow"] (the TensorFlow child's exception, stderr, stdout and fate), so a saved report can
be matched again by a newer table. Rows are tried in file order and every match is returned, most
specific first. Harmless log noise (knowledge linux.toml [[noise]]) is dropped before matching.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from tfdoctor.facts import canonical_name
from tfdoctor.knowledge import rows as knowledge_rows

# "install" rows are matched against an installer's own output (a failed step of the plan), never against
# the TensorFlow child's texts: the checks pass their own phase explicitly.
PHASES = ("import", "gpu", "probe", "install")


@dataclass(frozen=True)
class FixStep:
    action: str  # install | uninstall | reinstall | fresh_environment
    names: tuple[str, ...] = ()
    when_tensorflow_below: str | None = None
    when_tensorflow_at_least: str | None = None
    # A fix's commands run in order; a step marked `otherwise` is the way out only when no step
    # before it applied (alternatives must never be printed as consecutive commands).
    otherwise: bool = False


@dataclass(frozen=True)
class Signature:
    id: str
    phase: str
    diagnosis: str
    summary: str
    advice: str
    patterns: tuple[re.Pattern[str], ...]
    signals: tuple[str, ...]
    requires: tuple[str, ...]
    fix: tuple[FixStep, ...]
    source: str
    verified: bool
    examples: tuple[str, ...]
    url: str | None = None


@dataclass(frozen=True)
class Match:
    signature: Signature
    evidence: str  # the line(s) that matched, or "died of SIGILL"
    where: str  # exception | stderr | stdout | signal
    # Named groups of the pattern that matched ('gencode': '6.31.1'): fix steps may use them as {gencode}.
    groups: Mapping[str, str] = field(default_factory=dict)


def _signature(row: Mapping[str, Any]) -> Signature:
    return Signature(
        id=row["id"],
        phase=row["phase"],
        diagnosis=row["diagnosis"],
        summary=row["summary"],
        advice=row["advice"],
        patterns=tuple(re.compile(p) for p in row.get("patterns") or ()),
        signals=tuple(row.get("signals") or ()),
        requires=tuple(canonical_name(n) for n in row.get("requires") or ()),
        fix=tuple(FixStep(step["action"], tuple(step.get("names") or ()), step.get("when_tensorflow_below"),
                          step.get("when_tensorflow_at_least"), bool(step.get("otherwise")))
                 for step in row.get("fix") or ()),
        source=row["source"],
        verified=bool(row["verified"]),
        examples=tuple(row.get("examples") or ()),
        url=row.get("url"),
    )


@functools.lru_cache(maxsize=None)
def signatures() -> tuple[Signature, ...]:
    return tuple(_signature(row) for row in knowledge_rows("signatures", "signature"))


def by_id(signature_id: str) -> Signature:
    """The row with this id (a check that foresees a failure gives the row's own advice)."""
    return next(row for row in signatures() if row.id == signature_id)


@functools.lru_cache(maxsize=None)
def notable_pattern() -> re.Pattern[bytes]:
    """Bytes regex for lines worth keeping from anywhere in a long output: every signature pattern
    and the [[notable]] rows. The collector keeps such lines even when the middle is cut."""
    parts = [p.pattern for s in signatures() for p in s.patterns]
    parts += [row["pattern"] for row in knowledge_rows("signatures", "notable")]
    return re.compile("|".join(f"(?:{p})" for p in parts).encode("utf-8"))


def _noise_filter(gpu_expected: bool):
    """A predicate telling harmless lines (cuDNN factory registration, NUMA, ...), from the Linux
    knowledge's [[noise]] rows; a no-op if that table is absent."""
    try:
        from tfdoctor.facts.tensorflow_log import noise_kind
    except ImportError:  # pragma: no cover - the Linux knowledge ships with the package
        return lambda line: False
    return lambda line: noise_kind(line, gpu_expected) is not None


def _without_noise(text: str, is_noise) -> str:
    return "\n".join(line for line in text.splitlines() if not is_noise(line))


def exception_text(exception: Mapping[str, Any] | None) -> str:
    """'Type: message' of the exception and its causes, then its traceback, as Python prints them."""
    if not exception:
        return ""
    lines = [f"{exception.get('type')}: {exception.get('message')}"]
    lines += [f"{c.get('type')}: {c.get('message')}" for c in exception.get("causes") or ()]
    lines += list(exception.get("traceback") or ())
    return "\n".join(lines)


def recorded_texts(tf: Mapping[str, Any], gpu_expected: bool = True) -> list[tuple[str, str]]:
    """(where, text) pairs the signatures are searched in."""
    is_noise = _noise_filter(gpu_expected)
    stderr = "\n".join(part for part in (tf.get("stderr_head"), tf.get("stderr_tail")) if part)
    texts = [
        ("exception", exception_text(tf.get("exception"))),
        ("stderr", _without_noise(stderr, is_noise)),
        ("stderr", _without_noise("\n".join(tf.get("notable_lines") or ()), is_noise)),
        ("stdout", _without_noise(tf.get("stdout_tail") or "", is_noise)),
    ]
    for _, error in sorted((tf.get("errors") or {}).items()):
        texts.append(("exception", f"{error.get('type')}: {error.get('message')}"))
    return [(where, text) for where, text in texts if text]


def matched_lines(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start: end if end >= 0 else len(text)].strip()


def find(
    tf: Mapping[str, Any] | None,
    installed: Iterable[str] = (),
    phases: Iterable[str] = ("import",),
    gpu_expected: bool = True,
) -> list[Match]:
    """Every signature of these phases that the recorded child output matches, in table order."""
    if not tf:
        return []
    wanted = set(phases)
    have = {canonical_name(n) for n in installed}
    texts = recorded_texts(tf, gpu_expected)
    died_of = None if tf.get("timed_out") else tf.get("signal")
    found = []
    for signature in signatures():
        if signature.phase not in wanted or not set(signature.requires) <= have:
            continue
        if died_of and died_of in signature.signals:
            hit: Match | None = Match(signature, f"died of {died_of}", "signal")
        else:
            hit = _search(signature, texts)
        if hit is not None:
            found.append(hit)
    return found


def _search(signature: Signature, texts: list[tuple[str, str]]) -> Match | None:
    for pattern in signature.patterns:
        for where, text in texts:
            match = pattern.search(text)
            if match:
                groups = {k: v for k, v in match.groupdict().items() if v is not None}
                return Match(signature, matched_lines(text, match), where, groups)
    return None


def match_text(text: str, phases: Iterable[str] = PHASES, signal: str | None = None,
               installed: Iterable[str] = ()) -> list[Match]:
    """Signatures matching one bare text (as if it were the child's stderr): for tests and tools."""
    return find({"stderr_tail": text, "signal": signal}, installed, phases)
