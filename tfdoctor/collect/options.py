from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

# progress(event, data): "collected" {"collector", "facts"} when a collector is done (facts so far);
# "tensorflow-stage" {"stage"} when the TensorFlow child reaches a stage. For the live display only.
Progress = Callable[[str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class CollectOptions:
    python: str = sys.executable  # the target interpreter
    timeout: float = 60.0  # for the TensorFlow child
    probe: bool = True  # time the GPU against the CPU after import
    deep: bool = False  # the workload probe (crossover, dispatch, input pipeline, ...): up to ~15 s more
    # the long probe even with no GPU to compare (else a short CPU run): for --deep and a --min-gflops to judge
    careful_probe: bool = False
    sections: frozenset[str] = field(default_factory=frozenset)  # what the selected checks need
    command_timeout: float = 10.0  # for sysctl, nvidia-smi and friends
    progress: Optional[Progress] = field(default=None, compare=False, repr=False)
    # the environment variables the children run with and the facts record: None for this process's (the
    # children inherit it, and the target child's head start is used); `tfdoctor fix` passes the user's
    # shell as it will be once the plan's variable steps are done
    environ: Optional[Mapping[str, str]] = field(default=None, compare=False, repr=False)

    @property
    def variables(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ
