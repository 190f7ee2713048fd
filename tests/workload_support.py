"""The workload facts a --deep run records (the shapes tfdoctor/child/workload.py writes), constructed: the
workload check's tests judge them and the charts' tests draw them."""

from __future__ import annotations

import copy

from tests.cli_support import LINUX_FACTS


def contender(best_s: float, device: str = "/CPU:0", blocks: int = 5, spread: float = 0.05, **extra) -> dict:
    """One contender's timing record: blocks of `best_s` (the first slower by `spread`), as the child writes it."""
    values = {"warmup_s": best_s * 10, "reps_per_block": 4, "block_s": [best_s * (1 + spread)] + [best_s] * (blocks - 1),
              "blocks": blocks, "best_s": best_s, "median_s": best_s, "spread": spread, "device": device}
    values.update(extra)
    return values


def ladder(cpu_gflops: dict[int, float], gpu_gflops: dict[int, float] | None = None) -> dict:
    """A crossover section from GFLOPS per size (the outcome computed by the child's own rule)."""
    from tfdoctor.child import workload as child

    rows = []
    for n, cpu in cpu_gflops.items():
        row = {"n": n, "cpu": contender(2 * n ** 3 / cpu / 1e9, gflops=cpu, placement_ok=True,
                                        output_device="/job:localhost/replica:0/task:0/device:CPU:0")}
        if gpu_gflops:
            gpu = gpu_gflops[n]
            row["gpu"] = contender(2 * n ** 3 / gpu / 1e9, "/GPU:0", gflops=gpu, placement_ok=True,
                                   output_device="/job:localhost/replica:0/task:0/device:GPU:0")
            row["gpu_speedup"] = round(gpu / cpu, 4)
        rows.append(row)
    section = {"status": "ok", "dtype": "float32", "sizes": rows, "devices": ["gpu", "cpu"] if gpu_gflops else ["cpu"]}
    section.update(child.crossover_of(rows))
    return section


def workload_facts(gpu: bool = False, **sections) -> dict:
    """A Linux machine's facts with a finished workload (CPU only unless `gpu`); a section given as None is dropped."""
    devices = ["gpu", "cpu"] if gpu else ["cpu"]
    result = {
        "status": "ok", "budget_s": 11.0, "duration_s": 11.4, "devices": devices,
        "crossover": ladder({64: 10.0, 512: 150.0, 2048: 240.0}),
        "dispatch": {"status": "ok", "device": "/CPU:0", "ops_per_chain": 40, "tensor_shape": [8, 8],
                     "eager": contender(0.0012, per_op_us=30.0), "function": contender(0.0003, per_op_us=7.5),
                     "ratio": 4.0},
        "input_pipeline": {"status": "ok", "device": "/CPU:0", "batch": 256, "features": 64,
                           "no_prefetch": contender(0.004, steps_per_s=250.0, starvation=0.5),
                           "prefetch": contender(0.0022, steps_per_s=454.5, starvation=0.09),
                           "model_only": contender(0.002, steps_per_s=500.0), "prefetch_speedup": 1.82},
        "conv2d": {"status": "ok", "batch": 8, "image": [256, 256, 3], "filters": 32, "kernel": [3, 3],
                   "devices": devices, "cpu_forward": contender(0.007, images_per_s=1142.0),
                   "cpu_backward": contender(0.05, images_per_s=160.0)},
        "training_step": {"status": "ok", "keras_version": "3.15.1", "keras_import_s": 0.0,
                          "batch": {"dense": 128, "cnn": 64}, "models": {"dense": "784-128-10 Dense", "cnn": "cnn"},
                          "mixed_precision": {"tried": False, "reason": "no GPU"},
                          "dense_cpu": contender(0.002, build_s=0.05), "cnn_cpu": contender(0.01, build_s=0.04)},
        "memory": {"samples": [["start", {"rss_mb": 490.0, "peak_rss_mb": 490.0, "swap_used_mb": 0.0}],
                               ["training_step", {"rss_mb": 770.0, "peak_rss_mb": 775.0, "swap_used_mb": 0.0}]],
                   "peak_rss_mb": 775.0, "rss_start_mb": 490.0, "swap_start_mb": 0.0, "swap_end_mb": 0.0,
                   "swap_growth_mb": 0.0},
    }
    result["sections"] = {name: {"status": "ok", "duration_s": 2.0} for name in
                          ("crossover", "dispatch", "input_pipeline", "conv2d", "training_step", "memory")}
    for name, value in sections.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = value
    tensorflow = {"status": "ok", "imported": True, "stage": "done", "exit_code": 0, "timed_out": False,
                  "devices": [{"name": "/physical_device:CPU:0", "device_type": "CPU"}], "workload": result}
    return {**copy.deepcopy(LINUX_FACTS), "tensorflow": tensorflow}
