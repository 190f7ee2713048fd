"""Settings and flags, merged once into what the doctor runs with, and the one redaction of a document.

`tfdoctor` (run), `explain`, `scan`, `fix` and the Python API all come through here, so a requirement
flag, a [tool.tfdoctor] key and the timeout's default mean the same thing everywhere."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

if TYPE_CHECKING:
    from tfdoctor.diagnosis.config import Config
    from tfdoctor.diagnosis.doctor import DoctorOptions

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any], "Config", None]
DEFAULT_TIMEOUT_S = 60.0


class OptionsError(ValueError):
    """A bad configuration or flag value: the CLI exits 2 with it, the API raises DoctorError. One line."""


def load_settings(config: ConfigLike = None, discover: bool = True, *, gpu: Optional[str] = None,
                  tensorflow: Optional[str] = None, python: Optional[str] = None,
                  min_gflops: Optional[float] = None, min_speedup: Optional[float] = None) -> "Config":
    """The configuration (a file, a [tool.tfdoctor]-like mapping, a Config; None: the nearest pyproject.toml
    when `discover`, else none), then the requirement flags over it."""
    import tfdoctor.diagnosis.config as cfg

    try:
        if isinstance(config, cfg.Config):
            loaded = config
        elif isinstance(config, Mapping):
            loaded = cfg.parse_table(config, "config argument")
        elif config is not None:
            loaded = cfg.load_config(os.fspath(config))
        else:
            loaded = cfg.load_config() if discover else cfg.Config()
        flags = {}
        for flag, value, checker, name in (
            ("--require-gpu-kind", gpu, cfg.gpu_requirement, "gpu"),
            ("--require-tensorflow", tensorflow, cfg.specifier, "tensorflow"),
            ("--require-python", python, cfg.specifier, "python"),
            ("--min-gflops", min_gflops, cfg.positive_number, "min_gflops"),
            ("--min-gpu-speedup", min_speedup, cfg.positive_number, "min_gpu_speedup"),
        ):
            if value is not None:
                try:
                    flags[name] = checker(value)
                except ValueError as exc:
                    raise OptionsError(f"{flag}: {exc}") from None
        return loaded.overridden(**flags)
    except cfg.ConfigError as exc:
        raise OptionsError(str(exc)) from None


def requirement_facts(settings: Optional["Config"]) -> Optional[Mapping[str, Any]]:
    """facts["requirements"] for what the team asked, or None when it asked nothing."""
    if settings is None or settings.requirements.empty:
        return None
    return settings.requirements.to_facts(settings.source)


def doctor_options(settings: Optional["Config"], python: str, *, only: tuple[str, ...] = (),
                   skip: tuple[str, ...] = (), timeout: Optional[float] = None, probe: bool = True,
                   deep: bool = False, progress: Any = None, experiments: bool = True,
                   experiments_timeout: float = 30.0, environ: Optional[Mapping[str, str]] = None) -> "DoctorOptions":
    """What a diagnosis runs with: the flags first, then the settings, then the defaults."""
    from tfdoctor.diagnosis.doctor import DoctorOptions

    return DoctorOptions(
        python=python,
        only=tuple(only) or (settings.only if settings is not None else ()),
        skip=tuple(skip) or (settings.skip if settings is not None else ()),
        timeout=timeout if timeout is not None else (settings.timeout if settings is not None else None)
        or DEFAULT_TIMEOUT_S,
        probe=probe,
        deep=deep,
        experiments=experiments,
        experiments_timeout=experiments_timeout,
        requirements=requirement_facts(settings),
        progress=progress,
        environ=environ,
    )


def redact_document(document: dict, redact: bool = True) -> dict:
    """Redaction happens once, on the document, before any renderer sees it (see tfdoctor/report/redact.py)."""
    document["redacted"] = redact
    if not redact:
        return document
    from tfdoctor.report.redact import Redactor

    return Redactor.for_this_machine().learning_from(document).document(document)


def text_redactor(redact: bool = True) -> Callable[[str], str]:
    """The same redaction for a line shown before there is a document (the live display, scan's rows)."""
    if not redact:
        return lambda text: text
    from tfdoctor.report.redact import Redactor

    return Redactor.for_this_machine().text
