"""The workload probe of `tfdoctor --deep`, judged: the advice people read about slow TensorFlow (small
models run faster on the CPU, wrap the step in tf.function, add prefetch, raise the batch size, close
other programs), each backed or not by a figure measured on this machine.

The child (tfdoctor/child/workload.py) records facts.tensorflow.workload; this check is a pure function
of it, so `tfdoctor explain` re-judges a saved report. Every figure is the best of interleaved blocks
(warm-up excluded, recorded beside it). Lines: knowledge/workload.toml. Only a broken measurement, a GPU
that loses to the CPU on real work, an op falling back to the CPU, or swapping warn; a child that died
during the workload fails. The compact table of figures goes into evidence["table"] (rows of
section, figure, value) for the renderers.
"""

from __future__ import annotations

from typing import Any, Mapping

from tfdoctor.checking.registry import Facts, check
from tfdoctor.facts import tensorflow_child
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation

SECTIONS = ("crossover", "dispatch", "input_pipeline", "conv2d", "training_step", "memory")
SOURCES = {row["id"]: row["source"] for row in knowledge_rows("workload", "threshold")}


def threshold(name: str) -> Mapping[str, Any]:
    return next(row for row in knowledge_rows("workload", "threshold") if row["id"] == name)


def beyond(value: float, name: str) -> bool:
    """True when value is on the bad side of threshold `name`'s pass line."""
    row = threshold(name)
    return value > row["pass"] if row["better"] == "lower" else value < row["pass"]


def ms(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return "?"
    return f"{seconds * 1000:.2f} ms" if seconds < 0.01 else f"{seconds * 1000:.1f} ms"


def times(value: Any) -> str:
    return f"{value:.2f}x" if isinstance(value, (int, float)) else "?"


@check("workload", "Workload probe (--deep)", needs=("tensorflow",), tags=("deep",))
def workload(facts: Facts) -> Outcome:
    """with `--deep` only: the usual performance advice, measured on this machine

    with `--deep` only: the performance advice measured (matmul crossover GPU vs CPU, eager vs `tf.function`,
    `tf.data` prefetch, Conv2D, Keras training steps, mixed precision, swap); see
    [performance.md](performance.md#deep-workload-probe---deep)
    """
    tf = facts["tensorflow"]
    result = tf.get("workload")
    if not result:
        if str(tf.get("stage") or "").startswith("workload") and tf.get("status") != "ok":
            return _died(tf, {})
        return Outcome.skip("the workload probe did not run (tfdoctor --deep runs it)")
    if tf.get("status") != "ok" and str(tf.get("stage") or "").startswith("workload"):
        return _died(tf, result)
    if result.get("status") == "error":
        error = result.get("error") or {}
        return Outcome.warn(f"The workload probe raised {tensorflow_child.short_type(error.get('type'))}: "
                            f"{tensorflow_child.first_line(error.get('message'))}")
    return judge(result, tf.get("probe"))


def _died(tf: Mapping[str, Any], result: Mapping[str, Any]) -> Outcome:
    stage = str(tf.get("stage") or "workload")
    where = stage.partition(":")[2] or "its start"
    return Outcome.fail(f"The TensorFlow child {tensorflow_child.fate(tf)} during the workload probe ({where})",
                        *tensorflow_child.stderr_excerpt(tf), fix=Remediation(
                            "The ordinary checks above ran; this crash happened in a heavier workload "
                            f"({where}). Run the same kind of work outside tfdoctor to see whether your own "
                            "training dies the same way, and attach this report to a bug report."),
                        stage=stage, table=_table(result))


def judge(result: Mapping[str, Any], probe: Any = None) -> Outcome:
    findings = Findings()
    for name in SECTIONS[:-1]:
        section = result.get(name) or {}
        status = section.get("status") or ((result.get("sections") or {}).get(name) or {}).get("status")
        if status == "error":
            error = section.get("error") or {}
            findings.warn(f"The {name} workload raised {tensorflow_child.short_type(error.get('type'))}: "
                          f"{tensorflow_child.first_line(error.get('message'))}")
        elif status == "skipped":
            reason = ((result.get("sections") or {}).get(name) or {}).get("reason") or "skipped"
            findings.note(f"{name}: not run ({reason})")
    _crossover(findings, result.get("crossover") or {})
    _dispatch(findings, result.get("dispatch") or {})
    _pipeline(findings, result.get("input_pipeline") or {})
    _conv2d(findings, result.get("conv2d") or {})
    _training(findings, result.get("training_step") or {})
    _memory(findings, result.get("memory") or {})
    _quality(findings, result)
    _drift(findings, result, probe if isinstance(probe, Mapping) else {})
    summary = _summary(result)
    return findings.outcome(summary, table=_table(result), duration_s=result.get("duration_s"),
                            sources=SOURCES)


# ------------------------------------------------------------------------------------ sections

def _crossover(findings: Findings, section: Mapping[str, Any]) -> None:
    rows = section.get("sizes") or []
    outcome = section.get("outcome")
    for row in rows:
        for kind in ("gpu", "cpu"):
            side = row.get(kind) or {}
            if side.get("placement_ok") is False:
                findings.warn(f"A {row.get('n')}x{row.get('n')} matmul asked of the {kind.upper()} ran on "
                              f"{side.get('output_device')}: silent CPU fallback")
            if side.get("error"):
                _gpu_error(findings, f"matmul {row.get('n')}x{row.get('n')}", kind, side["error"])
    if outcome == "crossover":
        n = section.get("crossover_n")
        findings.note(f"Below {n}x{n} the CPU wins: small models run faster on the CPU (float32 matmul, GPU "
                      f"faster from {n}x{n} on)")
    elif outcome == "gpu_faster_everywhere":
        findings.note(f"The GPU is faster at every size from {rows[0].get('n')}x{rows[0].get('n')} on")
    elif outcome == "cpu_faster_everywhere":
        largest: Mapping[str, Any] = next((r for r in reversed(rows) if r.get("gpu_speedup") is not None), {})
        findings.warn(f"The GPU is slower than the CPU at every matmul size up to {largest.get('n')}x"
                      f"{largest.get('n')} ({times(largest.get('gpu_speedup'))} the CPU's speed)", fix=Remediation(
                          "Run your models on the CPU until this is explained: the GPU does not win even on "
                          "large products. Close other GPU-heavy programs and connect the power adapter, then "
                          "run tfdoctor --deep again; see the probe check for the GPU path itself.",
                          url=SOURCES["gpu-speedup"]))


def _gpu_error(findings: Findings, what: str, kind: str, error: Mapping[str, Any]) -> None:
    message = str(error.get("message") or "")
    if kind.startswith("gpu") and ("Could not satisfy device specification" in message
                                   or "no supported kernel" in message):
        findings.warn(f"{what} has no GPU kernel: with TensorFlow's default soft placement it falls back to "
                      "the CPU", tensorflow_child.first_line(message), fix=Remediation(
                          "This op runs on the CPU whatever the device scope says, with copies between the "
                          "GPU and the CPU around it. Keep it out of the hot loop, or run the model on the CPU."))
    else:
        findings.warn(f"{what} on the {kind.split('_')[0].upper()} raised "
                      f"{tensorflow_child.short_type(error.get('type'))}: {tensorflow_child.first_line(message)}")


def _dispatch(findings: Findings, section: Mapping[str, Any]) -> None:
    eager = (section.get("eager") or {}).get("per_op_us")
    graph = (section.get("function") or {}).get("per_op_us")
    ratio = section.get("ratio")
    if not isinstance(eager, (int, float)):
        return
    advice = (f"wrap the training step in tf.function: it ran {ratio:.1f}x faster per op here"
              if isinstance(ratio, (int, float)) and beyond(ratio, "function-gain") else None)
    if beyond(eager, "eager-per-op-us"):
        findings.warn(f"Eager ops are slow here: {eager:.0f} us per small op ({graph} us inside tf.function)",
                      fix=Remediation(f"Each eager op pays a dispatch cost that tf.function removes: {advice or 'wrap the step in tf.function'}.",
                                      url=SOURCES["function-gain"]))
    elif advice:
        findings.note(f"Dispatch: {eager:.1f} us per eager op, {graph:.1f} us in tf.function: {advice}")


def _pipeline(findings: Findings, section: Mapping[str, Any]) -> None:
    plain = section.get("no_prefetch") or {}
    fed = section.get("prefetch") or {}
    gain = section.get("prefetch_speedup")
    starving = plain.get("starvation")
    if not isinstance(gain, (int, float)) or not isinstance(starving, (int, float)):
        return
    if beyond(starving, "starvation") and beyond(gain, "prefetch-gain"):
        findings.note(f"Input pipeline: without prefetch the step waits for input {starving:.0%} of the time; "
                      f"prefetch(tf.data.AUTOTUNE) gave {gain:.2f}x the steps per second: add prefetch")
    elif beyond(starving, "starvation"):
        findings.note(f"Input pipeline: the step waits for input {starving:.0%} of the time, and prefetch "
                      f"gained only {gain:.2f}x ({fed.get('starvation', 0):.0%} waiting with it): the input and "
                      "the step share the same cores here, so make the input cheaper (cache, fewer Python "
                      "steps) or raise the batch size")
    else:
        findings.note(f"Input pipeline: the step waits for input {starving:.0%} of the time without prefetch")


def _conv2d(findings: Findings, section: Mapping[str, Any]) -> None:
    for key, side in section.items():
        if not isinstance(side, Mapping) or "_" not in key:
            continue
        if side.get("placement_ok") is False:
            findings.warn(f"Conv2D ({key.replace('_', ' ')}) asked of the GPU ran on {side.get('output_device')}: "
                          "silent CPU fallback")
        if side.get("error"):
            _gpu_error(findings, f"Conv2D {key.split('_')[1]}", key, side["error"])
    backward = section.get("backward_gpu_speedup")
    if isinstance(backward, (int, float)) and beyond(backward, "gpu-speedup"):
        findings.warn(f"A Conv2D training step on {section.get('batch')} images of 256x256x3 is slower on the "
                      f"GPU than on the CPU ({times(backward)} the CPU's speed)", fix=Remediation(
                          "Convolutions do not behave like matrix multiplies on every GPU. Raise the batch size "
                          "(the GPU needs more work per step to win), or train this model on the CPU.",
                          url=SOURCES["gpu-speedup"]))


def _training(findings: Findings, section: Mapping[str, Any]) -> None:
    for key, side in section.items():
        if isinstance(side, Mapping) and side.get("error"):
            _gpu_error(findings, f"The Keras {key.split('_')[0]} training step", key.split("_", 1)[1], side["error"])
    for model in ("dense", "cnn"):
        speedup = section.get(f"{model}_gpu_speedup")
        if isinstance(speedup, (int, float)) and beyond(speedup, "gpu-speedup"):
            findings.note(f"The small {model} model trains faster on the CPU ({times(speedup)} on the GPU): small "
                          "models and small batches run faster on the CPU; raise the batch size for the GPU")
        mixed = section.get(f"{model}_mixed_speedup")
        if isinstance(mixed, (int, float)) and beyond(mixed, "mixed-precision-gain"):
            findings.note(f"Mixed precision made the {model} step slower on this GPU ({times(mixed)}): keep float32")


def _memory(findings: Findings, section: Mapping[str, Any]) -> None:
    growth = section.get("swap_growth_mb")
    if isinstance(growth, (int, float)) and beyond(growth, "swap-growth-mb"):
        findings.warn(f"The machine swapped during the workload: swap grew by {growth:.0f} MiB", fix=Remediation(
            "Training slows down badly once memory is swapped out (on Apple silicon the GPU shares that memory). "
            "Close other programs, or use a smaller batch size.", url=SOURCES["swap-growth-mb"]))


def _quality(findings: Findings, result: Mapping[str, Any]) -> None:
    """Too few blocks: a figure that is no figure. Noise: said once, with the noisiest contender."""
    few, noisy = [], []
    for name in SECTIONS[:-1]:
        for contender, info in _contenders(result.get(name) or {}):
            if info.get("error"):
                continue
            if (info.get("blocks") or 0) < threshold("min-blocks")["pass"]:
                few.append(f"{name} {contender}")
            if isinstance(info.get("spread"), (int, float)) and beyond(info["spread"], "noise"):
                noisy.append((info["spread"], f"{name} {contender}"))
    if few:
        findings.warn(f"Inconclusive: fewer than {threshold('min-blocks')['pass']} timed blocks for "
                      f"{', '.join(few[:4])}{' and more' if len(few) > 4 else ''}", fix=Remediation(
                          "The workload ran out of time (a slow machine, or a short --timeout). Run "
                          "tfdoctor --deep again with fewer programs running, or a longer --timeout."))
    if noisy:
        worst = max(noisy)
        findings.note(f"Timing was noisy in {len(noisy)} contender(s) (worst: {worst[1]}, interquartile range "
                      f"{worst[0]:.0%} of the median block): the figures are the fastest blocks")


def _drift(findings: Findings, result: Mapping[str, Any], probe: Mapping[str, Any]) -> None:
    """The probe timed a matmul seconds before the workload's crossover timed the same size on the same
    device: when the two disagree, the machine's own speed changed while tfdoctor ran (a shared VM, a
    laptop changing power state), and this run's figures compare with other runs only within that margin."""
    rows = {row.get("n"): row for row in (result.get("crossover") or {}).get("sizes") or () if isinstance(row, Mapping)}
    for kind, side in ((probe.get("sides") or {}).items() if isinstance(probe.get("sides"), Mapping) else ()):
        if not isinstance(side, Mapping):
            continue
        probed = side.get("gflops_best")
        timed = ((rows.get(side.get("n")) or {}).get(kind) or {}).get("gflops")
        if not (isinstance(probed, (int, float)) and isinstance(timed, (int, float)) and probed > 0 and timed > 0):
            continue
        apart = max(probed, timed) / min(probed, timed)
        if beyond(apart, "drift"):
            n = side.get("n")
            findings.note(f"The machine's speed changed while tfdoctor ran: the probe's {n}x{n} {kind.upper()} "
                          f"matmul ran at {probed:.0f} GFLOPS, the workload's at {timed:.0f} GFLOPS "
                          f"({apart:.2f}x apart); compare these figures with other runs only within that margin")


def _contenders(section: Mapping[str, Any]):
    if "sizes" in section:
        for row in section.get("sizes") or ():
            for kind in ("gpu", "cpu"):
                if isinstance(row.get(kind), Mapping):
                    yield f"{kind} {row.get('n')}", row[kind]
        return
    for key, value in section.items():
        if isinstance(value, Mapping) and "block_s" in value:
            yield key, value


# ---------------------------------------------------------------------------------------- table

def _table(result: Mapping[str, Any]) -> list[list[str]]:
    """Rows of (section, figure, value): what Text and Markdown show as the compact table."""
    rows: list[list[str]] = []
    crossover = result.get("crossover") or {}
    sizes = crossover.get("sizes") or []
    if sizes:
        def gflops(row: Mapping[str, Any], kind: str) -> str:
            value = (row.get(kind) or {}).get("gflops")
            return f"{value:.0f}" if isinstance(value, (int, float)) else "?"
        curve = ", ".join(f"{row['n']}: " + (f"{gflops(row, 'gpu')}/{gflops(row, 'cpu')}" if "gpu" in row
                                              else gflops(row, "cpu")) for row in sizes)
        unit = "GFLOPS GPU/CPU" if "gpu" in sizes[0] else "GFLOPS CPU"
        rows.append(["crossover", f"matmul N: {unit}", curve])
        verdict = {"crossover": f"CPU wins below {crossover.get('crossover_n')}",
                   "gpu_faster_everywhere": "GPU wins at every size", "cpu_faster_everywhere": "CPU wins at every size",
                   "cpu_only": "no GPU: CPU curve only"}.get(str(crossover.get("outcome")), str(crossover.get("outcome")))
        rows.append(["crossover", "verdict", verdict])
    dispatch = result.get("dispatch") or {}
    eager, graph = (dispatch.get("eager") or {}).get("per_op_us"), (dispatch.get("function") or {}).get("per_op_us")
    if eager is not None or graph is not None:
        rows.append(["dispatch", "us per op: eager / tf.function", f"{eager} / {graph} ({times(dispatch.get('ratio'))})"])
    pipeline = result.get("input_pipeline") or {}
    if pipeline.get("no_prefetch") or pipeline.get("prefetch"):
        def sps(name: str) -> str:
            value = (pipeline.get(name) or {}).get("steps_per_s")
            return f"{value:.0f}" if isinstance(value, (int, float)) else "?"
        starving = (pipeline.get("no_prefetch") or {}).get("starvation")
        rows.append(["input_pipeline", "steps/s: no prefetch / prefetch / model only",
                     f"{sps('no_prefetch')} / {sps('prefetch')} / {sps('model_only')}"
                     + (f" (waiting {starving:.0%} without prefetch)" if isinstance(starving, (int, float)) else "")])
    conv = result.get("conv2d") or {}
    for what in ("forward", "backward"):
        cells = [f"{kind.upper()} {ms((conv.get(f'{kind}_{what}') or {}).get('best_s'))}"
                 for kind in ("gpu", "cpu") if f"{kind}_{what}" in conv]
        if cells:
            speedup = conv.get(f"{what}_gpu_speedup")
            rows.append(["conv2d", f"{what}, batch of {conv.get('batch')}",
                         " / ".join(cells) + (f" (GPU {times(speedup)})" if speedup is not None else "")])
    training = result.get("training_step") or {}
    for model in ("dense", "cnn"):
        cells = [f"{label} {ms((training.get(f'{model}_{key}') or {}).get('best_s'))}"
                 for key, label in (("gpu", "GPU"), ("gpu_mixed", "GPU fp16"), ("cpu", "CPU"))
                 if f"{model}_{key}" in training]
        if cells:
            rows.append(["training_step", f"{model} step", " / ".join(cells)])
    memory = result.get("memory") or {}
    if memory.get("peak_rss_mb") is not None or memory.get("swap_growth_mb") is not None:
        peak = memory.get("peak_rss_mb")
        growth = memory.get("swap_growth_mb")
        mib = lambda value: f"{value:.0f} MiB" if isinstance(value, (int, float)) else "?"  # noqa: E731
        rows.append(["memory", "peak RSS / swap growth", f"{mib(peak)} / {mib(growth)}"])
    return rows


def _summary(result: Mapping[str, Any]) -> str:
    parts = []
    crossover = result.get("crossover") or {}
    if crossover.get("outcome") == "crossover":
        parts.append(f"CPU wins below {crossover.get('crossover_n')}x{crossover.get('crossover_n')}")
    elif crossover.get("outcome") == "gpu_faster_everywhere":
        parts.append("GPU wins at every matmul size")
    elif crossover.get("outcome") == "cpu_only":
        best = max(((row.get("cpu") or {}).get("gflops") or 0 for row in crossover.get("sizes") or ()), default=0)
        parts.append(f"CPU only, up to {best:.0f} GFLOPS")
    ratio = (result.get("dispatch") or {}).get("ratio")
    if isinstance(ratio, (int, float)):
        parts.append(f"tf.function {ratio:.1f}x faster per op")
    gain = (result.get("input_pipeline") or {}).get("prefetch_speedup")
    if isinstance(gain, (int, float)):
        parts.append(f"prefetch {gain:.2f}x")
    done = sum(1 for name in SECTIONS[:-1] if (result.get(name) or {}).get("status") == "ok")
    head = f"{done} of {len(SECTIONS) - 1} workloads measured in {result.get('duration_s') or 0:.1f} s"
    return head + (": " + ", ".join(parts) if parts else "")
