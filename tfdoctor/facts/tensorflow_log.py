"""TensorFlow's log lines: their prefix (timestamp, level, file:line) taken off, and which are harmless noise
(knowledge/linux.toml [[noise]]). Shared by cuda-build, the failure signatures, the TensorFlow child's
reader and the GPU evidence."""

from __future__ import annotations

import re
from typing import Any

# Both prefix styles of TensorFlow's log lines, mixed in one run in https://github.com/bmaltais/kohya_ss/issues/3320:
#   "2023-10-09 13:36:23.355516: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:9342] "
#   "E0000 00:00:1751448150.986970   10148 cuda_dnn.cc:8579] "
_LOG_PREFIX = re.compile(
    r"^\s*(?:\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+: [IWEF] \S+:\d+\] "
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d+\.\d+\s+\d+ \S+:\d+\] "
    r"|[IWEF] \S+\.cc:\d+\] )"
)


def strip_log_prefix(line: str) -> str:
    """The message of one TensorFlow log line, without timestamp, level and file:line."""
    return _LOG_PREFIX.sub("", line.rstrip("\r\n"), count=1).strip()


def log_patterns(table: str) -> list[tuple[dict[str, Any], "re.Pattern[str]"]]:
    from tfdoctor.knowledge import rows as knowledge_rows

    return [(row, re.compile(row["pattern"])) for row in knowledge_rows("linux", table)]


def noise_kind(line: str, gpu_expected: bool = True) -> str | None:
    """The id of the harmless-noise pattern this log line matches (knowledge linux.toml [[noise]]),
    or None. Lines marked when = "no_gpu" are noise only when no NVIDIA GPU is expected."""
    message = strip_log_prefix(line)
    for row, pattern in log_patterns("noise"):
        if row.get("when", "always") == "no_gpu" and gpu_expected:
            continue
        if pattern.search(message):
            return str(row["id"])
    return None
