"""Team requirements and run settings: `[tool.tfdoctor]` in the nearest pyproject.toml, or a file of
its own (`--config FILE`: a pyproject.toml, or a TOML file whose top level is the same table).

    [tool.tfdoctor]
    require-gpu = true              # true / false, or "any" / "metal" / "cuda" (no "yes", no "1")
    tensorflow = ">=2.16"           # PEP 440 specifiers
    python = ">=3.10,<3.13"
    min-gflops = 200                # the best device's float32 matmul throughput (needs the probe)
    min-gpu-speedup = 2.0           # GPU over CPU on the same matmul (needs the probe)
    only = ["tensorflow-import"]    # run settings, as the flags of the same names
    skip = ["memory"]
    strict = true
    timeout = 120

The requirements become facts (`facts.requirements`), judged by the `requirements` check, so a saved
report carries them and `tfdoctor explain` judges them again. Anything this module refuses is a
`ConfigError` whose message is one line naming the file and the key (the CLI exits 2 with it): a
value of the wrong type (TOML has booleans: `require-gpu = "yes"` is refused, not guessed), an empty
specifier, an unknown check id in only/skip, a pyproject.toml that is not a file, a file over 1 MiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Optional

import tomli  # a dependency on every Python (the knowledge tables' reader, tfdoctor/knowledge)
from packaging.specifiers import InvalidSpecifier, SpecifierSet

GPU_KINDS = ("any", "metal", "cuda")
MAX_BYTES = 1024 * 1024  # a configuration is a few lines; anything this large is not one
KEYS = ("require-gpu", "tensorflow", "python", "min-gflops", "min-gpu-speedup", "only", "skip", "strict", "timeout")


class ConfigError(Exception):
    """The configuration cannot be used. The message is one line naming the file and the key."""


@dataclass(frozen=True)
class Requirements:
    """What a team requires of a machine. All None: nothing required (the check skips)."""

    gpu: Optional[str] = None  # "any", "metal" or "cuda"
    tensorflow: Optional[str] = None  # a PEP 440 specifier set, e.g. ">=2.16"
    python: Optional[str] = None
    min_gflops: Optional[float] = None
    min_gpu_speedup: Optional[float] = None

    @property
    def empty(self) -> bool:
        return all(value is None for value in (self.gpu, self.tensorflow, self.python, self.min_gflops,
                                               self.min_gpu_speedup))

    def to_facts(self, source: Optional[str]) -> dict[str, Any]:
        """facts.requirements (documented in schema/report.schema.json)."""
        return {"source": source, "gpu": self.gpu, "tensorflow": self.tensorflow, "python": self.python,
                "min_gflops": self.min_gflops, "min_gpu_speedup": self.min_gpu_speedup}


@dataclass(frozen=True)
class Config:
    requirements: Requirements = field(default_factory=Requirements)
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    strict: Optional[bool] = None  # None: not set here (the flag, or its default, decides)
    timeout: Optional[float] = None
    source: Optional[str] = None  # the file it came from; "command line" for flags only

    def overridden(self, **requirements: Any) -> "Config":
        """The same config with the requirements given on the command line (None: keep)."""
        given = {name: value for name, value in requirements.items() if value is not None}
        if not given:
            return self
        merged = replace(self.requirements, **given)
        return replace(self, requirements=merged, source=self.source or "command line")


def find_pyproject(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml in `start` or above it. One that exists but is not a file (a
    directory, a dangling link) is an error: skipping it would read another project's settings."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
        if candidate.exists() or candidate.is_symlink():
            raise ConfigError(f"{candidate}: not a file")
    return None


def load_config(path: Optional[str] = None, cwd: Optional[Path] = None) -> Config:
    """--config FILE when given (it must exist), else the nearest pyproject.toml's [tool.tfdoctor].

    A pyproject.toml without [tool.tfdoctor] is no configuration: the nearest project decides."""
    if path is not None:
        return _load_file(Path(path), explicit=True)
    found = find_pyproject(cwd or Path.cwd())
    return _load_file(found, explicit=False) if found else Config()


def _load_file(path: Path, explicit: bool) -> Config:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_BYTES // 1024 // 1024} MiB: not a configuration file")
        data = tomli.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except tomli.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    tool = data.get("tool")
    if isinstance(tool, dict) and "tfdoctor" in tool:
        table, prefix = tool["tfdoctor"], "tool.tfdoctor."
    elif explicit and path.name != "pyproject.toml":
        table, prefix = data, ""
    else:
        return Config()
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {prefix.rstrip('.') or 'the file'} is not a table")
    return parse_table(table, str(path), prefix)


def parse_table(table: Mapping[str, Any], source: str, prefix: str = "") -> Config:
    """Pure: the [tool.tfdoctor] table -> Config, or ConfigError naming the file and key."""

    def bad(key: str, why: str) -> ConfigError:
        return ConfigError(f"{source}: {prefix}{key}: {why}")

    unknown = sorted(key for key in table if key not in KEYS)
    if unknown:
        raise bad(unknown[0], f"unknown key (known: {', '.join(KEYS)})")
    checkers = {"require-gpu": gpu_requirement, "tensorflow": specifier, "python": specifier,
                "min-gflops": positive_number, "min-gpu-speedup": positive_number}
    values: dict[str, Any] = {}
    for key, checker in checkers.items():
        try:
            values[key] = checker(table[key]) if key in table else None
        except ValueError as exc:
            raise bad(key, str(exc)) from None
    requirements = Requirements(values["require-gpu"], values["tensorflow"], values["python"],
                                values["min-gflops"], values["min-gpu-speedup"])
    names = {}
    for key in ("only", "skip"):
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(key, "must be a list of check ids or tags")
        names[key] = tuple(part.strip() for v in value for part in v.split(",") if part.strip())
        if names[key]:
            from tfdoctor.checking.registry import UnknownCheckError, all_checks, select

            try:
                select(all_checks(), **{key: names[key]})
            except UnknownCheckError as exc:
                raise bad(key, str(exc)) from None
    strict = table.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise bad("strict", "must be true or false")
    try:
        timeout = timeout_seconds(table.get("timeout"))
    except ValueError as exc:
        raise bad("timeout", str(exc)) from None
    return Config(requirements, names["only"], names["skip"], strict, timeout, source)


# The value checkers raise ValueError(why); the command-line flags use them too.

def gpu_requirement(value: Any) -> Optional[str]:
    """true -> "any"; false -> None; "any" / "metal" / "cuda" as given (any case). Nothing else: a
    string that reads as a boolean ("yes", "true", "1") is refused like its opposite ("no"), so a
    value means the same wherever it is written."""
    if value is True:
        return "any"
    if value is False:
        return None
    if isinstance(value, str) and value.strip().lower() in GPU_KINDS:
        return value.strip().lower()
    raise ValueError(f"must be true, false, \"any\", \"metal\" or \"cuda\", not {value!r}")


def specifier(value: Any) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"must be a PEP 440 specifier string like \">=2.16\", not {value!r}")
    text = value.strip()
    if not text:  # SpecifierSet("") allows every version: an empty requirement is a mistake, not "any"
        raise ValueError("must not be empty (leave the key out to require nothing)")
    if text[:1].isdigit():  # "2.16" means ==2.16.* to a person: say so rather than guess
        raise ValueError(f"{value!r} is not a PEP 440 specifier (write \">={text}\" or \"=={text}.*\")")
    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        raise ValueError(f"{value!r} is not a PEP 440 specifier (like \">=2.16\")") from None
    return text


def positive_number(value: Any) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a positive number, not {value!r}")
    return float(value)


def timeout_seconds(value: Any) -> Optional[float]:
    """The TensorFlow import and probe timeout, as --timeout takes it: a number of seconds, 1 or more."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 1:
        raise ValueError(f"must be a number of seconds, 1 or more, not {value!r}")
    return float(value)
