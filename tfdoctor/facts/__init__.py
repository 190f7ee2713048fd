"""Facts: the one serialisable snapshot every check reads. Collectors write it; checks only read it.

Sections (each a top-level key; documented field by field in schema/report.schema.json):
  host          the machine as the doctor process sees it (platform.system(), release, machine)
  os            raw OS identification: sw_vers output, /etc/os-release fields, /proc/version, glibc
  sysctl        macOS sysctl keys -> raw value strings (None when the key is unknown)
  cpu           brand, core counts, ISA flags and where they came from
  memory        RAM and swap in bytes (psutil)
  python        the target interpreter, as it describes itself (run in a child process)
  distributions installed distributions of the target interpreter (importlib.metadata, no imports)
  environment   allowlisted environment variables (secret-looking values never recorded)
  nvidia        nvidia-smi and /proc/driver/nvidia outputs, raw, with each command's fate
  tensorflow    what the TensorFlow child process found: its fate, version, devices, probe
  collection    per-collector durations and errors

Raw values are kept (the sysctl string, the command output, the error text) so that a saved report
can be diagnosed again later by newer checks and parsers. Helpers below are small pure accessors.

The modules of this package read the facts for the checks, purely (no I/O): parsers of raw tool
output and questions answered from the knowledge data, each shared by two or more checks. A reader
that only one check uses lives in that check's module (checks/<id>.py), with its remedies. They import
nothing above knowledge/ and versions.py: the repairs and advice shared by several checks are built in
tfdoctor/remedies/ (tests/project/test_import_floors.py holds the floors).
  apple_silicon                 Apple silicon, Rosetta, the interpreter's machine and origin (python.org, conda...)
  mach_o                        Mach-O headers: which architectures a binary holds, what can run it
  sw_vers_sysctl, system_profiler  what those Mac tools print, parsed (macOS version, sysctl values, GPUs)
  installable_wheels            which TensorFlow wheels install for a platform, Python and macOS (releases table)
  metal_pairing                 which tensorflow-metal loads into which TensorFlow; the newest GPU pair
  tensorflow_pins               what a TensorFlow release pins (packages, NumPy major, legacy Keras)
  tensorflow_distributions      installed TensorFlow distributions: shims, real builds, copies
  nvidia_smi                    nvidia-smi and /proc outputs parsed; the GPUs nvidia-smi lists
  gpu_evidence                  whether an NVIDIA GPU is here (nvidia-smi, PCI, TensorFlow's own log);
                                which of them CUDA_VISIBLE_DEVICES leaves visible
  tensorflow_log                TensorFlow's log lines: prefix taken off, harmless noise recognised
  tensorflow_build              the installed TensorFlow's build: CUDA or not, built for which CUDA/cuDNN
  platform                      the wheel and machine platforms, Rosetta, WSL: one reader for everyone
  tensorflow_child              what the TensorFlow child recorded: its fate, devices, errors
  signatures                    known failure texts matched (their fixes: remedies/signatures.py)
  import_causes                 which installed distribution an import error names; what explains it
  import_suspects               an import error no rule explains: the distributions it names, each with a
                                candidate release to try
  integrity                     installed files against their RECORD; installers that overwrote each other
  requires_dist                 Requires-Dist parsed, markers evaluated for the target interpreter
  published_requires            Requires-Dist a report did not record, from the release's published metadata
  releases                      the generated release table (knowledge/releases.toml)
  knowledge_age                 how far the generated tables reach (their newest releases, the day they were
                                read); what installed is newer, which the checks then claim nothing about
  made_for                      the companion release made for the installed TensorFlow
  shadowing                     copies from outside the installation that `import` finds first
  companions                    which TensorFlow each release of tf-keras, tensorflow-text... declares
                                (knowledge/companions.toml); the release made for an installed TensorFlow
  build_names                   the names TensorFlow's builds are published under (one list for everyone)
  experiments                   what the experiment child proved or tried (its section of the facts)
  owners                        which installed distribution owns a file (RECORD): a traceback's suspects
  autograph                     AutoGraph's conversion as the child recorded it; what its failing files import
  record_less                   distributions installed without a RECORD, which pip cannot uninstall
  tested_locks                  what TensorFlow's own CI tested (knowledge/tested_locks.toml, when generated)
  windows_paths                 Windows paths past the long-path limit
  wheel_tags                    installed wheels' WHEEL tags against the target interpreter's version and ABI
"""

from __future__ import annotations

import functools
import re
from types import MappingProxyType
from typing import Any, Mapping, Sequence

Facts = Mapping[str, Any]

SECTIONS = (
    "host", "os", "sysctl", "cpu", "memory", "python", "distributions",
    "environment", "nvidia", "tensorflow",
)

PLATFORM_NAMES = {"Darwin": "macOS", "Linux": "Linux", "Windows": "Windows"}


def is_recorded(facts: Facts, section: str) -> bool:
    return facts.get(section) is not None


def section(facts: Facts, name: str) -> Mapping[str, Any]:
    value = facts.get(name)
    return value if isinstance(value, Mapping) else {}


def host_system(facts: Facts) -> str:
    return str(section(facts, "host").get("system") or "")


@functools.lru_cache(maxsize=65536)
def canonical_name(name: str) -> str:
    """PEP 503 normalisation: 'TensorFlow_Metal' -> 'tensorflow-metal'. Remembered: a run asks for the same few
    thousand names again and again (issue 36)."""
    return _SEPARATORS.sub("-", name).lower()


_SEPARATORS = re.compile(r"[-_.]+")


class _Recorded:
    """A `distributions` list as a cache key: equal only to the same list object at the same length (an append
    is a new key), and holding the list, so that its id is not reused while the key lives."""

    __slots__ = ("entries", "size")

    def __init__(self, entries: Sequence[Any]) -> None:
        self.entries = entries
        self.size = len(entries)

    def __hash__(self) -> int:
        return id(self.entries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Recorded) and other.entries is self.entries and other.size == self.size


Copies = Mapping[str, tuple[tuple[int, Mapping[str, Any]], ...]]
_Index = tuple[Copies, Mapping[str, Mapping[str, Any]], Mapping[str, str]]
_NOTHING: _Index = (MappingProxyType({}), MappingProxyType({}), MappingProxyType({}))


@functools.lru_cache(maxsize=8)
def _indexed(recorded: _Recorded) -> _Index:
    """(canonical name -> (position in the list, entry) of every copy, in list (sys.path) order; named
    distribution -> its first copy; named distribution -> the version of its first copy that records one)."""
    found: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    versions: dict[str, str] = {}
    for position, entry in enumerate(recorded.entries):
        if isinstance(entry, Mapping):
            name = canonical_name(str(entry.get("name") or ""))
            found.setdefault(name, []).append((position, entry))
            if name and entry.get("version"):
                versions.setdefault(name, str(entry["version"]))
    first = {name: copies[0][1] for name, copies in found.items() if name}
    return (MappingProxyType({name: tuple(copies) for name, copies in found.items()}), MappingProxyType(first),
            MappingProxyType(versions))


def _index(facts: Facts) -> _Index:
    recorded = facts.get("distributions") or ()
    if not isinstance(recorded, Sequence) or isinstance(recorded, (str, bytes)):
        return _NOTHING
    return _indexed(_Recorded(recorded))


def copies_by_name(facts: Facts) -> Copies:
    """Every recorded distribution by canonical name: (position in `distributions`, entry) of each copy, in
    sys.path order ('' for entries without a name). Built once per list, not once per question: the checks ask
    about each of thousands of installed distributions, and a scan per question made a run quadratic in their
    number (issue 36: 5,000 distributions took minutes). Read-only; an entry edited in place after a question
    is seen as edited, a list appended to is indexed again."""
    return _index(facts)[0]


def first_copies(facts: Facts) -> Mapping[str, Mapping[str, Any]]:
    """canonical name -> the first recorded copy (the one the target imports: sys.path order), built once per
    list as copies_by_name is. Read-only."""
    return _index(facts)[1]


def versions_installed(facts: Facts) -> Mapping[str, str]:
    """canonical name -> the version of its first copy that records one, in the order those copies are recorded;
    built once per list as copies_by_name is. Read-only."""
    return _index(facts)[2]


def distributions(facts: Facts, name: str) -> list[Mapping[str, Any]]:
    """Every installed copy of a distribution (there can be several, in several site dirs)."""
    return [entry for _, entry in copies_by_name(facts).get(canonical_name(name), ())]


def installed_version(facts: Facts, name: str) -> str | None:
    """The version the target interpreter would import: the first copy on sys.path."""
    copies = distributions(facts, name)
    return copies[0].get("version") if copies else None
