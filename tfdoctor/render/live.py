"""The live display on a terminal: the header at once, the results in report order as they become
final, and a status line with a spinner and the stage ("importing TensorFlow 1.8 s").

It is rich's Live display on stdout, transient: when the run ends it is erased and the report is
printed in its place, so what stays on the screen is exactly the text report. The CLI uses it only
when stdout is a terminal, the format is text, and neither --quiet nor -o is given.
"""

from __future__ import annotations

import platform
import sys
import time
from typing import Any, Callable, Mapping, Optional

from tfdoctor._version import __version__
from tfdoctor.render import platform_line
from tfdoctor.render.sanitize import clean

# What the TensorFlow child's stage means to a person (tf_child.py records these stages).
STAGES = {
    "started": "starting Python",
    "importing": "importing TensorFlow",
    "imported": "listing devices",
    "devices": "listing devices",
    "listed": "listing devices",
    "probe": "timing GPU against CPU",
    "probe:check": "checking the probe's result",
    "keras": "trying tf.keras",
    "workload": "running the workload probe",
    "import_failed": "recording the import error",
    "not_installed": "looking for TensorFlow",
    "done": "finishing",
}


def stage_words(stage: Optional[str]) -> str:
    if not stage:
        return "starting TensorFlow"
    if stage in STAGES:
        return STAGES[stage]
    head, _, rest = stage.partition(":")
    if head == "workload" and rest:
        return f"running the workload probe: {rest.replace('_', ' ')}"
    return STAGES.get(head, stage.replace("_", " "))


def experiment_words(data: Mapping[str, Any]) -> str:
    return clean(f"experiment {data.get('index')}: {data.get('goal')} with {data.get('trial')}")


class ExperimentLine:
    """A progress callback for runs without the live display (--json, -o, --quiet) on a terminal's stderr:
    one line, rewritten, while the offline experiments run, and cleared after them. stdout is untouched."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __call__(self, event: str, data: Mapping[str, Any]) -> None:
        if event != "experiment":
            return
        try:
            text = "" if data.get("done") else f"tfdoctor: {experiment_words(data)}"[:200]
            self.stream.write("\r\x1b[2K" + text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal must not sink the diagnosis
            pass


class LiveDisplay:
    """A progress callback (tfdoctor.diagnosis.doctor.Progress) that draws itself; use it as a context manager."""

    def __init__(self, python: str, redact: Callable[[str], str] = lambda text: text,
                 color: Optional[bool] = None) -> None:
        self.python, self.redact, self.color = python, redact, color
        self.check_ids: list[str] = []  # from the "checks" event, in report order
        self.started = time.monotonic()
        self.facts: Mapping[str, Any] = {}
        self.pending: list[str] = []
        self.results: dict[int, dict[str, Any]] = {}
        self.stage: Optional[str] = None
        self.stage_since = self.started
        self._live: Any = None
        self.experiment: Optional[str] = None  # the offline experiment running now

    def __enter__(self) -> "LiveDisplay":
        from rich.console import Console
        from rich.live import Live

        # no_color None, not False: rich then honours NO_COLOR
        console = Console(file=sys.stdout, force_terminal=self.color, no_color=True if self.color is False else None,
                          highlight=False)
        self._live = Live(console=console, get_renderable=self.renderable, refresh_per_second=10,
                          transient=True, redirect_stdout=False, redirect_stderr=False)
        self._live.start(refresh=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def __call__(self, event: str, data: Mapping[str, Any]) -> None:
        try:
            if event == "checks":
                self.check_ids = list(data.get("ids") or ())
            elif event == "collected":
                self.facts = data.get("facts") or {}
                self.pending = list(data.get("pending") or ())
            elif event == "tensorflow-stage":
                self.stage = str(data.get("stage"))
                self.stage_since = time.monotonic()
            elif event == "result":
                self.results[int(data["index"])] = data["result"].to_dict()
            elif event == "experiment":
                self.experiment = None if data.get("done") else experiment_words(data)
        except Exception:  # noqa: BLE001 - the display must never sink the diagnosis
            pass

    def header(self) -> str:
        if self.facts.get("python"):
            where = platform_line({"facts": self.facts})
        else:
            where = f"{platform.system()} {platform.machine()} · {self.python}"
        return clean(self.redact(f"tfdoctor {__version__} · {where}"))

    def status(self) -> str:
        now = time.monotonic()
        parts = []
        others = [name for name in self.pending if name != "tensorflow"]
        if others or not self.facts:
            parts.append("gathering facts")
        if "tensorflow" in self.pending or not self.facts:
            words = stage_words(self.stage)
            since = self.stage_since if self.stage else self.started
            parts.append(f"{words} {now - since:.1f} s" if self.stage else words)
        if self.experiment:
            parts.append(self.experiment)
        if not parts:
            parts.append("running the checks")
        return " · ".join(parts)

    def renderable(self) -> Any:
        from rich.console import Group
        from rich.spinner import Spinner
        from rich.text import Text

        from tfdoctor.render import STATUS_SYMBOLS
        from tfdoctor.render.text import STYLES

        lines: list[Any] = [Text(self.header(), style="bold"), Text("")]
        width = max((len(i) for i in self.check_ids), default=10)
        # report order, the final ones only: a check that reads TensorFlow's facts takes its place when the child
        # is done (platform-support, first in the report, reads them: stopping at it would show nothing early)
        for index in range(len(self.check_ids)):
            result = self.results.get(index)
            if result is None:
                continue
            status = result["status"]
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{STATUS_SYMBOLS[status]}  ", style=STYLES[status])
            line.append(f"{result['id']:<{width}} ", style="bold")
            line.append(clean(self.redact(str(result["summary"]))).replace("\n", " "))
            lines.append(line)
        lines.append(Spinner("dots", text=Text(self.status(), style="dim")))
        return Group(*lines)
