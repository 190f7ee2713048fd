"""What `tfdoctor fix` shows on a terminal: progress on stderr (a spinner on a terminal, a line each
stage otherwise), the plan and the outcome on stdout. Text from the environment is stripped of
control characters and printed without markup, and every line passes the redactor first (the
installer's relayed output can hold an index URL with its password, a SAS signature, a token)."""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator, Mapping

from tfdoctor.render.sanitize import clean, clean_document


class ConsoleUi:
    def __init__(self, redact: Callable[[str], str] = lambda text: text) -> None:
        from rich.console import Console

        self.redact = redact
        self.out = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)

    @contextlib.contextmanager
    def progress(self, text: str) -> Iterator[None]:
        text = clean(self.redact(text))
        if self.err.is_terminal:
            with self.err.status(text, spinner="dots"):
                yield
        else:
            self.err.print(f"tfdoctor fix: {text}", markup=False)
            yield

    def say(self, text: str, style: str = "") -> None:
        self.out.print(clean(self.redact(text)), style=style or None, markup=False)

    def plan(self, document: Mapping[str, Any]) -> None:
        from tfdoctor.render.text import plan_lines

        for line in plan_lines(clean_document(dict(document))):
            self.out.print(line)

    def confirm(self, question: str) -> bool:
        from rich.prompt import Confirm

        return Confirm.ask(clean(self.redact(question)), console=self.out, default=False)

    def can_ask(self) -> bool:
        return sys.stdin.isatty() and self.out.is_terminal
