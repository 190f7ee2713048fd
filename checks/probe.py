"""GPU vs CPU speed probe: the child's float32 matmul timings and results, judged.

Each device's product is checked for placement (a GPU result computed on the CPU is a silent
fallback), finiteness and agreement with a float64 reference (TF32-aware on NVIDIA), its timing for
enough repetitions; then the GPU/CPU speed-up and, where the chip is known, the efficiency against
its theoretical peak. Thresholds and peaks: knowledge/probe.toml, each row with its public source.

Throughput is each side's best block, not the median block. Changed because on a shared 2-core VM the median moved 1.3x between runs while the best
block moved 1.1x and stayed within 10 % of long separate runs (bench/bench.py): noise only adds time.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from tfdoctor.checking.registry import Facts, check
from tfdoctor.facts import host_system, section, signatures, tensorflow_child
from tfdoctor.knowledge import rows as knowledge_rows
from tfdoctor.remedies.signatures import remediation_for
from tfdoctor.results.findings import Findings
from tfdoctor.results.model import Outcome, Remediation
from tfdoctor.results.repairs import Repair


@check("probe", "GPU vs CPU speed probe", needs=("tensorflow",),
       uses=("host", "python", "distributions", "cpu", "sysctl", "system_profiler"))
def probe(facts: Facts) -> Outcome:
    """a float32 matmul on the GPU and the CPU: placement, correctness, GFLOPS, speed-up

    a float32 matmul timed on the GPU and the CPU: placement (silent CPU fallback), NaN/Inf, error against a float64
    reference, GFLOPS and speed-up
    """
    tf = facts["tensorflow"]
    if tf.get("status") == "not_installed":
        return Outcome.skip("TensorFlow is not installed (see tensorflow-install)")
    if not tf.get("imported"):
        return Outcome.skip("TensorFlow did not import (see tensorflow-import)")
    result = tf.get("probe") or {}
    if result.get("status") == "skipped":
        return Outcome.skip(f"probe skipped ({result.get('reason') or 'not asked for'})")
    if tf.get("status") != "ok" and tensorflow_child.phase_of(tf.get("stage")) == "probe":
        return _probe_died(facts, tf)
    if not result:
        if tensorflow_child.phase_of(tf.get("stage")) == "devices":
            return Outcome.skip("the TensorFlow child ended before the probe (see gpu-visible)")
        return Outcome.skip("probe not recorded")
    if result.get("status") == "error":
        error = result.get("error") or {}
        return Outcome.fail(f"The probe raised {tensorflow_child.short_type(error.get('type'))}: "
                            f"{tensorflow_child.first_line(error.get('message'))}", error=error)
    return judge(facts, tf, result)


def _probe_died(facts: Facts, tf: Mapping[str, Any]) -> Outcome:
    stage = str(tf.get("stage"))
    device = "GPU" if ":GPU:" in stage else "CPU" if ":CPU:" in stage else None
    where = f"on the {device}" if device else f"({stage})"
    details = [f"stage reached: {stage}"] + [f"stderr: {line}" for line in tensorflow_child.stderr_excerpt(tf)]
    known = signatures.find(tf, tensorflow_child.installed_names(facts), phases=("probe", "gpu"))
    if known:  # e.g. kernels JIT-compiled from PTX: the first GPU call can outlast the timeout
        details.insert(0, f"likely cause: {known[0].signature.summary}")
        return Outcome.fail(f"The probe {where} {tensorflow_child.fate(tf)}", *details,
                            fix=remediation_for(known[0], facts), stage=stage, signal=tf.get("signal"),
                            timed_out=tf.get("timed_out"), signature=known[0].signature.id)
    fix = None
    if device == "GPU":
        platform = _gpu_platform(facts, tf)
        why = "a float32 matmul on the GPU crashed or hung the process: TensorFlow works on the CPU meanwhile"
        hide = {"cuda": (Repair.set_env("CUDA_VISIBLE_DEVICES", "-1", reason=why),),
                "apple": (Repair.uninstall("tensorflow-metal", reason=why),)}.get(platform or "", ())
        fix = Remediation("A float32 matmul on the GPU crashed or hung the process: the GPU path is broken (see "
                          "metal-plugin, nvidia-driver and cuda-build). Until it is fixed, keep TensorFlow off "
                          "the GPU to work on the CPU.", repairs=hide)
    return Outcome.fail(f"The probe {where} {tensorflow_child.fate(tf)}", *details, fix=fix,
                        stage=stage, signal=tf.get("signal"), timed_out=tf.get("timed_out"))


def threshold(name: str) -> Mapping[str, Any]:
    return next(row for row in knowledge_rows("probe", "threshold") if row["id"] == name)


def grade(value: float, name: str) -> str:
    """'pass' | 'warn' | 'fail' of a value against threshold `name`."""
    row = threshold(name)
    lower = row["better"] == "lower"
    good = value <= row["pass"] if lower else value >= row["pass"]
    if good:
        return "pass"
    if "fail" in row and (value > row["fail"] if lower else value < row["fail"]):
        return "fail"
    return "warn"


def flops(gflops: float | None) -> str:
    if gflops is None:
        return "?"
    return f"{gflops / 1000:.2f} TFLOPS" if gflops >= 1000 else f"{gflops:.0f} GFLOPS"


def _gpu_platform(facts: Facts, tf: Mapping[str, Any]) -> str | None:
    """'apple' (Metal), 'cuda' (NVIDIA) or None, for the thresholds that differ."""
    if tf.get("metal_lines") or (facts and host_system(facts) == "Darwin"):
        return "apple"
    if (tf.get("build_info") or {}).get("is_cuda_build") or any(
            d.get("compute_capability") for d in tf.get("gpu_details") or ()):
        return "cuda"
    return None


def compute_capability(tf: Mapping[str, Any]) -> tuple[int, int] | None:
    for details in tf.get("gpu_details") or ():
        value = details.get("compute_capability")
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return int(value[0]), int(value[1])
        if isinstance(value, str) and re.match(r"^\d+\.\d+$", value):
            major, minor = value.split(".")
            return int(major), int(minor)
    return None


def tf32_active(tf: Mapping[str, Any]) -> bool:
    capability = compute_capability(tf)
    return bool(tf.get("tf32_enabled")) and capability is not None and capability >= (8, 0)


def judge(facts: Facts, tf: Mapping[str, Any], result: Mapping[str, Any]) -> Outcome:
    sides = result.get("sides") or {}
    gpu, cpu = sides.get("gpu"), sides.get("cpu")
    platform = _gpu_platform(facts, tf)
    findings = Findings()
    for line in _timing_lines(gpu, cpu):
        findings.note(line)  # notes stay in the details whatever the verdict
    for side in (gpu, cpu):
        if side:
            _judge_side(findings, side, tf)
    if tensorflow_child.devices(tf, "GPU") and not gpu:
        findings.fail("TensorFlow lists a GPU but the probe did not time it")
    speedup = result.get("speedup")
    if isinstance(speedup, (int, float)) and gpu and cpu:
        _judge_speedup(findings, speedup, platform, gpu, cpu)
    peaks = {"gpu": gpu_peak(facts, tf) if gpu else None, "cpu": cpu_peak(facts, result)}
    _judge_efficiency(findings, gpu, peaks["gpu"], "gpu-efficiency", "GPU")
    _judge_efficiency(findings, cpu, peaks["cpu"], "cpu-efficiency", "CPU")
    if gpu and platform == "cuda":
        _judge_first_call(findings, facts, tf, gpu)
    evidence = {
        "gflops": {kind: (side or {}).get("gflops_best") for kind, side in (("gpu", gpu), ("cpu", cpu))},
        "n": {kind: (side or {}).get("n") for kind, side in (("gpu", gpu), ("cpu", cpu))},
        "speedup": speedup, "platform": platform, "tf32_active": tf32_active(tf) if gpu else None,
        "peaks": peaks,
    }
    return findings.outcome(_ok_summary(gpu, cpu, speedup), **evidence)


def _ok_summary(gpu: Mapping[str, Any] | None, cpu: Mapping[str, Any] | None, speedup: Any) -> str:
    if gpu and cpu and isinstance(speedup, (int, float)):
        return (f"GPU {flops(gpu.get('gflops_best'))} vs CPU {flops(cpu.get('gflops_best'))} on a float32 "
                f"matmul: the GPU is {speedup:.1f}x faster, and both results are right")
    if cpu:
        return (f"CPU: {flops(cpu.get('gflops_best'))} on a float32 {cpu.get('n')}x{cpu.get('n')} matmul "
                f"(best of {cpu.get('blocks')}), result right; no GPU to compare")
    return "probe recorded no timing"


def _timing_lines(*sides: Mapping[str, Any] | None) -> list[str]:
    lines = []
    for side in sides:
        if not side or not side.get("blocks"):
            continue
        lines.append(
            f"{side.get('kind')}: N={side.get('n')}, {side.get('blocks')} blocks of {side.get('calls_per_block')} "
            f"call(s), best {1000 * (side.get('call_s_min') or 0):.1f} ms, median "
            f"{flops(side.get('gflops_median'))}, first call {1000 * (side.get('first_call_s') or 0):.0f} ms, "
            f"relative error {side.get('rel_error')}")
    return lines


def _judge_side(findings: Findings, side: Mapping[str, Any], tf: Mapping[str, Any]) -> None:
    kind = side.get("kind") or "?"
    error = side.get("error")
    if error:
        message = tensorflow_child.first_line(error.get("message"))
        if kind == "GPU" and re.search(r"Could not satisfy device specification|no supported kernel|"
                                       r"No registered '\w+' OpKernel for 'GPU'", str(error.get("message"))):
            findings.fail(f"The GPU cannot run a float32 matmul: {message}", fix=Remediation(
                "With soft placement on (TensorFlow's default) this work would silently run on the CPU. The GPU "
                "device has no float32 MatMul kernel: the plugin or build does not fit (see metal-plugin, "
                "cuda-build)."))
        else:
            findings.fail(f"The {kind} probe raised {tensorflow_child.short_type(error.get('type'))}: {message}")
        return
    if side.get("placement_ok") is False:
        findings.fail(f"Silent CPU fallback: the {kind} matmul ran on {side.get('output_device')}", fix=Remediation(
            "TensorFlow computed the product somewhere else than the device asked for, so 'GPU' work is not "
            "on the GPU. The plugin or build does not fit (see metal-plugin, cuda-build)."))
    if side.get("finite") is False:
        findings.fail(f"The {kind} matmul returned NaN or Inf for well-scaled inputs", fix=Remediation(
            "The device computes wrong numbers; results of training on it cannot be trusted. Update or "
            "reinstall the GPU plugin or driver (see metal-plugin, nvidia-driver)."))
    rel = side.get("rel_error")
    if isinstance(rel, (int, float)) and side.get("finite") is not False:
        name = "rel-error-tf32" if kind == "GPU" and tf32_active(tf) else "rel-error-fp32"
        verdict = grade(rel, name)
        label = "TensorFloat-32 is on, " if name == "rel-error-tf32" else ""
        if verdict == "fail":
            findings.fail(f"The {kind} matmul is wrong: relative error {rel:.1e} against float64 "
                          f"({label}limit {threshold(name)['fail']:g})", fix=Remediation(
                              "A float32 product should agree with float64 to about 1e-6. This device's "
                              "results cannot be trusted (see metal-plugin, nvidia-driver)."))
        elif verdict == "warn":
            findings.warn(f"The {kind} matmul is imprecise: relative error {rel:.1e} against float64 "
                          f"({label}float32 gives about 1e-6): a reduced-precision path is in use")
        elif label:
            findings.note(f"TensorFloat-32 is on (relative error {rel:.1e}, as expected)")
    blocks = side.get("blocks") or 0
    minimum = threshold("min-blocks")["pass"]
    if blocks < minimum:
        findings.warn(f"The {kind} timing is inconclusive: {blocks} timed block(s), fewer than {minimum}")
    spread = side.get("spread")
    if isinstance(spread, (int, float)) and grade(spread, "noise") != "pass":
        findings.note(f"{kind} timing was noisy: blocks spread {spread:.0%} around the median")


def _judge_speedup(findings: Findings, speedup: float, platform: str | None,
                   gpu: Mapping[str, Any], cpu: Mapping[str, Any]) -> None:
    name = "speedup-apple" if platform == "apple" else "speedup-cuda"
    verdict = grade(speedup, name)
    what = (f"GPU {flops(gpu.get('gflops_best'))} vs CPU {flops(cpu.get('gflops_best'))}: "
            f"speed-up {speedup:.2f}x (expected at least {threshold(name)['pass']:g}x)")
    fix = Remediation(
        "A large float32 matmul should run several times faster on the GPU. Close other GPU-heavy programs, "
        "connect the power adapter and run tfdoctor again; if the GPU stays slow, its TensorFlow path is "
        "broken (see metal-plugin, nvidia-driver, cuda-build).")
    if verdict == "fail":
        findings.fail(f"The GPU is slower than the CPU: {what}", fix=fix)
    elif verdict == "warn":
        findings.warn(f"The GPU is barely faster than the CPU: {what}", fix=fix)


def _judge_efficiency(findings: Findings, side: Mapping[str, Any] | None, peak: Mapping[str, Any] | None,
                      name: str, kind: str) -> None:
    if not side or not peak or not side.get("gflops_best"):
        return
    efficiency = side["gflops_best"] / peak["gflops"]
    text = f"{kind} reaches {efficiency:.0%} of its peak ({flops(peak['gflops'])}, {peak['basis']})"
    if efficiency > 1:
        findings.note(f"{kind} runs above its estimated peak ({flops(peak['gflops'])}, {peak['basis']}): the "
                      "estimate is a lower bound (a clock above nominal, or more FMA units than assumed)")
    elif grade(efficiency, name) == "pass":
        findings.note(text)
    elif kind == "GPU":
        findings.warn(f"{text}: low for a {side.get('n')}x{side.get('n')} matmul", fix=Remediation(
            "A healthy GPU reaches 55-80 % of its float32 peak on a large matmul. Low Power Mode, a busy GPU or "
            "a broken plugin lower it; run tfdoctor again on mains power with other GPU programs closed."))
    else:
        findings.warn(f"{text}: the CPU is starved", fix=Remediation(
            "Below 15 % of the CPU's peak: other programs use the cores, a power-saving mode limits the clock, "
            "or the process runs under emulation."))


def _judge_first_call(findings: Findings, facts: Facts, tf: Mapping[str, Any], gpu: Mapping[str, Any]) -> None:
    first = gpu.get("init_call_s")
    if not isinstance(first, (int, float)) or grade(first, "first-gpu-call-cuda") == "pass":
        return
    matches = signatures.find(tf, phases=("probe",))
    reason = f": {matches[0].signature.summary}" if matches else ""
    findings.warn(f"The first GPU call took {first:.1f} s{reason}",
                  fix=remediation_for(matches[0], facts) if matches else None)


# ------------------------------------------------------------------------------------------ peaks

def _longest_prefix(rows: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    fitting = [row for row in rows if name == row["chip"] or name.startswith(row["chip"] + " ")]
    return max(fitting, key=lambda row: len(row["chip"]), default=None)


def chip_name(facts: Facts, tf: Mapping[str, Any]) -> str | None:
    brand = section(facts, "sysctl").get("machdep.cpu.brand_string") or section(facts, "cpu").get("brand")
    if brand and str(brand).startswith("Apple M"):
        return str(brand).strip()
    names = tensorflow_child.gpu_names(tf)
    return names[0] if names and names[0].startswith("Apple M") else None


def gpu_peak(facts: Facts, tf: Mapping[str, Any]) -> dict[str, Any] | None:
    """Apple GPU: cores x 256 x clock, with the chip from sysctl and the cores from system_profiler."""
    from tfdoctor.facts.system_profiler import parse_displays

    chip = chip_name(facts, tf)
    if not chip:
        return None
    row = _longest_prefix(knowledge_rows("probe", "apple_gpu"), chip)
    displays = parse_displays(section(facts, "system_profiler").get("SPDisplaysDataType"))
    cores = next((d["cores"] for d in displays if d.get("cores") and str(d.get("chipset") or d.get("name")
                                                                      or "").startswith("Apple")), None)
    if not row or not cores:
        return None
    gflops = cores * row["flop_per_core_cycle"] * row["clock_ghz"]
    basis = f"{chip}, {cores} GPU cores x {row['flop_per_core_cycle']} x {row['clock_ghz']} GHz"
    return {"gflops": round(gflops, 1), "basis": basis + ("" if row["verified"] else ", clock estimated")}


_BRAND_CLOCK = re.compile(r"@\s*([\d.]+)\s*GHz", re.IGNORECASE)


def cpu_peak(facts: Facts, result: Mapping[str, Any]) -> dict[str, Any] | None:
    """Apple: P-cores x clock x 32 (NEON); x86: physical cores x clock x FLOP/cycle of its ISA."""
    chip = chip_name(facts, {})
    if chip:
        row = _longest_prefix(knowledge_rows("probe", "apple_cpu"), chip)
        if not row:
            return None
        gflops = row["p_cores"] * row["clock_ghz"] * row["flop_per_cycle"]
        return {"gflops": round(gflops, 1), "basis": f"{chip}, {row['p_cores']} P-cores x {row['clock_ghz']} GHz "
                                                     f"x {row['flop_per_cycle']} (NEON), estimated"}
    probed = result.get("cpu") or {}
    flags = tensorflow_child.cpu_flags(facts) or ({str(f).lower() for f in probed["flags"]} if probed.get("flags") else None)
    cores = section(facts, "cpu").get("physical_cores") or probed.get("physical_cores")
    if cores and probed.get("usable_cores"):
        cores = min(cores, probed["usable_cores"])  # a container or taskset may allow fewer
    clock = _clock_ghz(facts, result)
    if not flags or not cores or not clock:
        return None
    row = next((r for r in knowledge_rows("probe", "x86_flops") if set(r["flags"]) <= flags), None)
    if not row:
        return None
    gflops = cores * clock * row["flop_per_cycle"]
    return {"gflops": round(gflops, 1), "basis": f"{cores} cores x {clock:.2f} GHz x {row['flop_per_cycle']} "
                                                 f"({'+'.join(row['flags'])}), estimated"}


def _clock_ghz(facts: Facts, result: Mapping[str, Any]) -> float | None:
    clock = result.get("cpu") or {}
    if isinstance(clock.get("mhz"), (int, float)) and clock["mhz"] > 0:
        return clock["mhz"] / 1000
    brand = section(facts, "cpu").get("brand") or section(facts, "sysctl").get("machdep.cpu.brand_string")
    match = _BRAND_CLOCK.search(str(brand or ""))
    return float(match.group(1)) if match else None
