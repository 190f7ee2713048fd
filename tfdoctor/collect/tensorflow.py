"""The TensorFlow child: `import tensorflow` (and the GPU-vs-CPU probe) in a separate process.

Importing TensorFlow is exactly what breaks (SIGILL under Rosetta, an abort from a duplicate plugin, a
dlopen error, a hang), so the doctor never does it itself. The child (tfdoctor/child/tf_child.py) runs
in the target interpreter as `python -c <source>`, like collect/target.py, so its sys.path is the
user's, but from an empty working directory (processes/commands.py neutral_directory): a tensorflow.py or
json.py of the project folder is read by the shadowing check, never imported here. It writes its findings
to a file stage by stage; this side records the process's fate (exit code, signal, timeout) and bounded
captures of its stdout and stderr, read as they come so that a child printing megabytes never blocks. The
child runs in its own session and the whole group, and whatever escaped it, is killed at the timeout and
after the child exits, so nothing it started outlives the doctor.
"""

from __future__ import annotations

import json
import os
import re
import signal
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any, Callable, Mapping, Optional

from tfdoctor.child import source
from tfdoctor.collect.options import CollectOptions
from tfdoctor.collect.target import TargetUnusableError, confirm_python
from tfdoctor.facts.tensorflow_child import COMPANION_MODULES
from tfdoctor.processes.commands import CHILDREN, finish, start_child
from tfdoctor.processes.deadline import bounded

# Seconds of timing the probe may spend after the import (the ladder, warm-ups and blocks of every
# device). On a 2-core VM the whole probe then takes about 0.5 s after the import (notes/tfchild.md).
PROBE_BUDGET_S = 0.45
# With no GPU to compare, the probe is a short correctness-and-GFLOPS run on the CPU: the same checks
# (placement, numbers, at least three timed blocks) at a smaller N, whose GFLOPS read lower than the
# long run's (TensorFlow's CPU matmul gains with N). The long run is for GPUs, --deep and --min-gflops
# (CollectOptions.careful_probe).
CPU_ONLY_PROBE_BUDGET_S = 0.12
# Seconds of the --deep workload probe after the probe (child/workload.py); it overruns its budget by
# ~5 % on a 2-core VM, and the issue allows 15 s more than a run without --deep.
WORKLOAD_BUDGET_S = 11.0

# TensorFlow prints INFO lines the diagnosis reads (the Metal plugin's "Metal device set to", the
# cpu_feature_guard line naming AVX, dso_loader's dlopen failures); a user's TF_CPP_MIN_LOG_LEVEL=2 or 3
# would hide them. Only the log level changes; everything else in the environment is the user's.
CHILD_LOG_LEVEL = "0"

HEAD_BYTES = 16 * 1024
TAIL_BYTES = 48 * 1024
NOTABLE_LIMIT = 80
LINE_LIMIT = 2000
STAGE_POLL_S = 0.1

# Windows reports a crash as an NTSTATUS exit code, not a signal.
WINDOWS_CRASHES = {0xC000001D: "SIGILL", 0xC0000005: "SIGSEGV", 0xC0000409: "SIGABRT", 0xC00000FD: "SIGSEGV"}

_METAL_LINE = re.compile(r"Metal device set to|systemMemory:|maxCacheSize:|name: METAL")


class StreamCapture:
    """Keeps the head and the tail of a stream, and the notable lines from anywhere in between."""

    def __init__(self, notable: re.Pattern[bytes] | None = None,
                 head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.notable = notable
        self.head_limit, self.tail_limit = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.partial = b""
        self.total = 0
        self.lines: list[str] = []

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if len(self.head) < self.head_limit:
            self.head += chunk[: self.head_limit - len(self.head)]
        self.tail += chunk
        if len(self.tail) > self.tail_limit:
            del self.tail[: len(self.tail) - self.tail_limit]
        if self.notable is not None:
            data = self.partial + chunk
            cut = data.rfind(b"\n") + 1
            self._scan(data[:cut])
            self.partial = data[cut:][-LINE_LIMIT:]

    def close(self) -> None:
        if self.notable is not None and self.partial:
            self._scan(self.partial)
        self.partial = b""

    def _scan(self, data: bytes) -> None:
        if self.notable is None or len(self.lines) >= NOTABLE_LIMIT or not data:
            return
        for match in self.notable.finditer(data):
            start = data.rfind(b"\n", 0, match.start()) + 1
            end = data.find(b"\n", match.end())
            end = end if end >= 0 else len(data)
            if end - start > LINE_LIMIT:  # a huge line: keep the part around the match
                start = max(start, match.start() - LINE_LIMIT // 2)
                end = min(end, start + LINE_LIMIT)
            line = data[start:end].decode("utf-8", "replace").rstrip()
            if line not in self.lines:
                self.lines.append(line)
                if len(self.lines) >= NOTABLE_LIMIT:
                    return

    def drain(self, stream: IO[bytes]) -> None:
        try:
            while True:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
                if not chunk:
                    break
                self.feed(chunk)
        except (OSError, ValueError):
            pass
        finally:
            self.close()

    def text(self) -> dict[str, Any]:
        """{'head': first bytes or None when nothing was cut, 'tail': the rest, 'bytes', 'notable'}."""
        decode = lambda data: bytes(data).decode("utf-8", "replace")  # noqa: E731
        if self.total <= self.head_limit + self.tail_limit:
            whole = bytes(self.head) + bytes(self.tail)[len(self.tail) - (self.total - len(self.head)):]
            return {"head": None, "tail": decode(whole), "bytes": self.total, "notable": list(self.lines)}
        return {"head": decode(self.head), "tail": decode(self.tail), "bytes": self.total,
                "notable": list(self.lines)}


@dataclass(frozen=True)
class ChildFate:
    returncode: int | None  # negative: killed by that signal (POSIX)
    timed_out: bool
    duration_s: float
    stdout: Mapping[str, Any]
    stderr: Mapping[str, Any]


class StageWatch:
    """Reports the child's stage (from the result file it rewrites at every stage) to a progress
    callback, at most every STAGE_POLL_S: the live display shows "importing TensorFlow 1.8 s"."""

    def __init__(self, path: str, progress: Callable[[str, Mapping[str, Any]], None] | None) -> None:
        self.path, self.progress = path, progress
        self.last_read = 0.0
        self.stage: str | None = None

    def __call__(self) -> None:
        now = time.monotonic()
        if self.progress is None or now - self.last_read < STAGE_POLL_S:
            return
        self.last_read = now
        stage = (read_result(self.path) or {}).get("stage")
        if stage and stage != self.stage:
            self.stage = stage
            self.progress("tensorflow-stage", {"stage": stage})


def run_child(argv: list[str], env: Mapping[str, str], timeout: float,
              notable: re.Pattern[bytes] | None = None, watch: Callable[[], None] | None = None,
              cwd: str | None = None) -> ChildFate:
    """argv as a child of its own (processes/commands.py start_child: its own session, marked, run from the
    neutral directory unless `cwd` says), its streams captured as they come, killed with everything it
    started at the timeout (or the operation's deadline) and after it exits (finish)."""
    started = time.perf_counter()
    timeout = bounded(timeout)
    try:
        process = start_child(argv, env, cwd=cwd)
    except OSError as exc:
        raise TargetUnusableError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    CHILDREN.add(process)  # an interrupt kills its group; the wait below then ends at once
    captures = {"stdout": StreamCapture(notable), "stderr": StreamCapture(notable)}
    try:
        timed_out = finish(process, timeout, captures["stdout"], captures["stderr"], watch)
    finally:
        CHILDREN.discard(process)  # reaped by finish: listed until then, so its pid was not reused
        for capture in captures.values():
            capture.close()
    return ChildFate(process.returncode, timed_out, round(time.perf_counter() - started, 4),
                     captures["stdout"].text(), captures["stderr"].text())


def signal_name(returncode: int | None) -> tuple[str | None, bool]:
    """(name, inferred): SIGILL for -4; for 132 from a shell wrapper (128 + 4), inferred=True."""
    if returncode is None or returncode == 0:
        return None, False
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name, False
        except ValueError:
            return f"signal {-returncode}", False
    if returncode & 0xFFFFFFFF in WINDOWS_CRASHES:
        return WINDOWS_CRASHES[returncode & 0xFFFFFFFF], True
    if 128 < returncode < 160:
        try:
            return signal.Signals(returncode - 128).name, True
        except ValueError:
            return None, False
    return None, False


def child_status(result: Mapping[str, Any] | None, fate: ChildFate) -> str:
    if fate.timed_out:
        return "timed_out"
    stage = (result or {}).get("stage")
    if stage == "not_installed" and fate.returncode == 0:
        return "not_installed"
    if (result or {}).get("exception") and stage == "import_failed" and (fate.returncode or 0) >= 0:
        return "import_error"
    if fate.returncode == 0 and stage == "done":
        return "ok"
    return "crashed"


def tensorflow_facts(result: Mapping[str, Any] | None, fate: ChildFate, timeout: float,
                     user_log_level: str | None = None) -> dict[str, Any]:
    """facts["tensorflow"] from what the child wrote (possibly partial, or None) and how it ended."""
    result = dict(result or {})
    status = child_status(result, fate)
    signal_, inferred = signal_name(fate.returncode) if not fate.timed_out else ("SIGKILL", False)
    stages = [name for name, _ in result.get("stages") or ()]
    stderr, stdout = fate.stderr, fate.stdout
    notable = list(stderr.get("notable") or ()) + list(stdout.get("notable") or ())
    return {
        "status": status,
        "exit_code": fate.returncode,
        "signal": signal_,
        "signal_inferred": inferred,  # from a shell's 128+N exit code or a Windows NTSTATUS
        "timed_out": fate.timed_out,
        "timeout_s": timeout,
        "duration_s": fate.duration_s,
        "stage": result.get("stage"),
        "stages": result.get("stages") or [],
        "imported": "imported" in stages,
        "import_s": result.get("import_s"),
        "stderr_tail": stderr.get("tail") or "",
        "stderr_head": stderr.get("head"),
        "stderr_bytes": stderr.get("bytes", 0),
        "stdout_tail": stdout.get("tail") or "",
        "stdout_bytes": stdout.get("bytes", 0),
        "notable_lines": notable,
        "metal_lines": [line for line in notable if _METAL_LINE.search(line)],
        "exception": result.get("exception"),
        "errors": result.get("errors") or {},
        "spec": result.get("spec"),
        "version": result.get("version"),
        "build_info": result.get("build_info"),
        "plugins": result.get("plugins"),
        "devices": result.get("devices"),
        "gpu_details": result.get("gpu_details"),
        "tf32_enabled": result.get("tf32_enabled"),
        "soft_placement_default": result.get("soft_placement_default"),
        "probe": result.get("probe"),
        "keras": result.get("keras"),
        "autograph": result.get("autograph"),
        "companions": result.get("companions"),
        "log_level": {"TF_CPP_MIN_LOG_LEVEL": CHILD_LOG_LEVEL, "user_value": user_log_level},
    }


TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")  # what Python's tempfile reads, on POSIX and on Windows


def with_private_temp(environ: Mapping[str, str], scratch: str) -> dict[str, str]:
    """The child's temporary files go into the run's scratch directory, removed with it. AutoGraph
    writes a source file per converted function into the temporary directory and deletes it at exit,
    which a child leaving by os._exit (or killed) never reaches: they would pile up in the user's /tmp."""
    env = dict(environ)
    for name in TEMP_VARIABLES:
        env[name] = scratch
    return env


def child_environment(environ: Mapping[str, str], scratch: Optional[str] = None) -> dict[str, str]:
    env = with_private_temp(environ, scratch) if scratch else dict(environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = CHILD_LOG_LEVEL
    return env


def read_result(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def companion_layers() -> dict[str, list[str]]:
    """{companion module: the Keras layer classes it exports} (knowledge/companion_layers.toml)."""
    from tfdoctor.knowledge import rows

    layers: dict[str, list[str]] = {}
    for row in rows("companion_layers", "layers"):
        layers.setdefault(row["module"], []).append(row["name"])
    return layers


def collect_tensorflow(options: CollectOptions) -> dict[str, Any]:
    from tfdoctor.facts.signatures import notable_pattern

    with tempfile.TemporaryDirectory(prefix="tfdoctor-") as scratch:
        out = os.path.join(scratch, "tf_child.json")
        config: dict[str, Any] = {"out": out, "probe": bool(options.probe), "budget_s": PROBE_BUDGET_S,
                  "cpu_only_budget_s": PROBE_BUDGET_S if options.careful_probe else CPU_ONLY_PROBE_BUDGET_S,
                  "timeout_s": float(options.timeout), "companions": list(COMPANION_MODULES),
                  "keras_layers": companion_layers()}
        # an AutoGraph conversion of Python control flow (issue 29): AutoGraph reads the function's source file
        config["autograph"] = os.path.join(scratch, "tfdoctor_autograph_trace.py")
        with open(config["autograph"], "w", encoding="utf-8") as handle:
            handle.write(source("autograph_trace"))
        if options.deep:  # the workload probe: its script goes beside the result file, the child exec()s it
            config["workload"] = {"script": os.path.join(scratch, "workload.py"), "budget_s": WORKLOAD_BUDGET_S}
            with open(config["workload"]["script"], "w", encoding="utf-8") as handle:
                handle.write(source("workload"))
        argv = [options.python, "-c", source("tf_child"), json.dumps(config)]
        fate = run_child(argv, child_environment(options.variables, scratch), options.timeout, notable_pattern(),
                         watch=StageWatch(out, options.progress))
        result = read_result(out)
    if result is None and not fate.timed_out:
        confirm_python(options.python)
    facts = tensorflow_facts(result, fate, options.timeout, options.variables.get("TF_CPP_MIN_LOG_LEVEL"))
    if options.deep:  # only with --deep: without it the facts stay as they were
        facts["workload"] = (result or {}).get("workload")
    return {"tensorflow": facts}
