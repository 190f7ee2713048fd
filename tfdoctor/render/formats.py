"""The output formats: one module each (text, json_format, markdown, github, openmetrics), registered in
one tuple, each declaring the commands it serves. The CLI builds every command's `--format` choices from here,
so a format that cannot render a scan or a diff is refused by the argument parser, never printed as text.

A new format is one module defining `FORMAT = OutputFormat(...)`, its name added to `REGISTERED`, and its test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module
from typing import Any, Callable, Mapping, Optional, Sequence

# What a format can be asked to render: one environment's report (run, explain), a comparison of two (diff),
# and scan's table of environments.
COMMANDS = ("report", "diff", "scan")

# The registry: tfdoctor.render.<module>, each defining FORMAT. Their order is the help's.
REGISTERED = ("text", "json_format", "markdown", "github", "openmetrics")


@dataclass(frozen=True)
class Look:
    """How the reader sees the output: the report's detail, and the terminal's colours and width (None off one)."""

    verbose: bool = False
    quiet: bool = False
    color: Optional[bool] = False
    width: Optional[int] = None
    redacted: bool = True


@dataclass(frozen=True)
class OutputFormat:
    name: str
    help: str
    report: Optional[Callable[[Mapping[str, Any], Look], str]] = None
    diff: Optional[Callable[[Mapping[str, Any], Look], str]] = None
    scan: Optional[Callable[[Sequence[Mapping[str, Any]], Look], str]] = None
    # GitHub Actions: workflow-command annotations and the job summary beside the text (render/github.py)
    annotates: bool = False
    # plain text on a terminal: colour allowed (github's text goes to a CI log: none)
    colored: bool = False
    aliases: tuple[str, ...] = field(default=())

    def serves(self, command: str) -> bool:
        return getattr(self, command) is not None


@lru_cache(maxsize=1)
def registry() -> dict[str, OutputFormat]:
    found: dict[str, OutputFormat] = {}
    for module in REGISTERED:
        declared = import_module(f"tfdoctor.render.{module}").FORMAT
        found[declared.name] = declared
    return found


def serving(command: str) -> tuple[str, ...]:
    """The names of the formats that render this command's output, in the registry's order."""
    if command not in COMMANDS:
        raise ValueError(f"no command {command!r} renders output (one of {', '.join(COMMANDS)})")
    return tuple(name for name, declared in registry().items() if declared.serves(command))


def output_format(name: str) -> OutputFormat:
    try:
        return registry()[name]
    except KeyError:
        raise ValueError(f"no output format {name!r} (one of {', '.join(registry())})") from None
