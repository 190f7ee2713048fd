"""The workload check's judgement of constructed workload facts (the shapes tfdoctor/child/workload.py
records): crossover found, a GPU slower or faster everywhere, CPU fallbacks, eager dispatch, prefetch,
swapping, inconclusive timing, a child that died during the workload; the facts follow the schema and
`tfdoctor explain` re-judges a saved workload."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.builders import probe_side
from tests.cli_support import run_cli, write
from tests.workload_support import contender, ladder, workload_facts
from tfdoctor.checks.workload import workload
from tfdoctor.results.model import Status
from tfdoctor.schema import report_schema

SCHEMA = report_schema()
FACTS_VALIDATOR = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/facts"})


def judged(facts: dict):
    FACTS_VALIDATOR.validate(facts)  # what the tests judge is what the schema documents
    return workload.run(facts)


def test_cpu_only_machine_passes_with_every_figure_in_the_table():
    outcome = judged(workload_facts())
    assert outcome.status is Status.PASS
    assert outcome.summary.startswith("5 of 5 workloads measured in 11.4 s: CPU only, up to 240 GFLOPS")
    sections = [row[0] for row in outcome.evidence["table"]]
    assert sections == ["crossover", "crossover", "dispatch", "input_pipeline", "conv2d", "conv2d",
                        "training_step", "training_step", "memory"]
    assert ["crossover", "verdict", "no GPU: CPU curve only"] in outcome.evidence["table"]
    assert any("wrap the training step in tf.function: it ran 4.0x faster" in d for d in outcome.details)
    assert any("prefetch(tf.data.AUTOTUNE) gave 1.82x" in d and "add prefetch" in d for d in outcome.details)


def test_crossover_found_says_where_the_cpu_wins():
    facts = workload_facts(gpu=True, crossover=ladder({64: 10.0, 256: 60.0, 512: 150.0, 2048: 240.0},
                                                      {64: 1.0, 256: 40.0, 512: 600.0, 2048: 4000.0}))
    outcome = judged(facts)
    assert outcome.status is Status.PASS
    assert "CPU wins below 512x512" in outcome.summary
    assert any(d.startswith("Below 512x512 the CPU wins: small models run faster on the CPU") for d in outcome.details)
    assert ["crossover", "verdict", "CPU wins below 512"] in outcome.evidence["table"]


def test_gpu_faster_everywhere_passes():
    facts = workload_facts(gpu=True, crossover=ladder({64: 10.0, 2048: 240.0}, {64: 20.0, 2048: 4000.0}))
    outcome = judged(facts)
    assert outcome.status is Status.PASS and "GPU wins at every matmul size" in outcome.summary


def test_gpu_slower_everywhere_warns_with_cpu_advice():
    facts = workload_facts(gpu=True, crossover=ladder({64: 10.0, 2048: 240.0}, {64: 1.0, 2048: 120.0}))
    outcome = judged(facts)
    assert outcome.status is Status.WARN
    assert outcome.summary == "The GPU is slower than the CPU at every matmul size up to 2048x2048 (0.50x the CPU's speed)"
    assert "Run your models on the CPU" in outcome.remediation.advice
    assert outcome.remediation.url.startswith("https://")


def test_a_gpu_matmul_placed_on_the_cpu_is_a_silent_fallback():
    section = ladder({512: 150.0}, {512: 600.0})
    section["sizes"][0]["gpu"].update(placement_ok=False, output_device="/job:localhost/replica:0/task:0/device:CPU:0")
    outcome = judged(workload_facts(gpu=True, crossover=section))
    assert outcome.status is Status.WARN and "silent CPU fallback" in outcome.summary
    assert "asked of the GPU ran on /job:localhost/replica:0/task:0/device:CPU:0" in outcome.summary


def test_a_gpu_op_without_kernel_falls_back_to_the_cpu():
    conv = workload_facts()["tensorflow"]["workload"]["conv2d"]
    conv["gpu_backward"] = {"warmup_s": None, "reps_per_block": 1, "block_s": [], "blocks": 0, "device": "/GPU:0",
                            "error": {"type": "tensorflow.python.framework.errors_impl.InvalidArgumentError",
                                      "message": "Could not satisfy device specification of node Conv2DBackpropFilter: "
                                                 "enable_soft_placement=0. Supported device types [CPU]"}}
    outcome = judged(workload_facts(gpu=True, conv2d=conv))
    assert outcome.status is Status.WARN
    assert outcome.summary.startswith("Conv2D backward has no GPU kernel: with TensorFlow's default soft placement")


def test_conv2d_slower_on_the_gpu_warns_and_says_raise_the_batch_size():
    conv = workload_facts()["tensorflow"]["workload"]["conv2d"]
    conv.update(gpu_forward=contender(0.004, "/GPU:0"), gpu_backward=contender(0.1, "/GPU:0"),
                forward_gpu_speedup=1.75, backward_gpu_speedup=0.5)
    outcome = judged(workload_facts(gpu=True, conv2d=conv))
    assert outcome.status is Status.WARN and "slower on the GPU than on the CPU (0.50x" in outcome.summary
    assert "Raise the batch size" in outcome.remediation.advice


def test_slow_eager_dispatch_warns_to_use_tf_function():
    dispatch = workload_facts()["tensorflow"]["workload"]["dispatch"]
    dispatch["eager"]["per_op_us"], dispatch["function"]["per_op_us"], dispatch["ratio"] = 240.0, 20.0, 12.0
    outcome = judged(workload_facts(dispatch=dispatch))
    assert outcome.status is Status.WARN and outcome.summary.startswith("Eager ops are slow here: 240 us per small op")
    assert "12.0x faster per op" in outcome.remediation.advice


def test_prefetch_that_cannot_overlap_is_explained_not_blamed():
    pipeline = workload_facts()["tensorflow"]["workload"]["input_pipeline"]
    pipeline["prefetch_speedup"], pipeline["prefetch"]["starvation"] = 0.95, 0.5
    outcome = judged(workload_facts(input_pipeline=pipeline))
    assert outcome.status is Status.PASS
    assert any("prefetch gained only 0.95x" in d and "share the same cores" in d for d in outcome.details)


def test_small_models_faster_on_the_cpu_and_useless_mixed_precision_are_advice():
    training = workload_facts()["tensorflow"]["workload"]["training_step"]
    training.update(dense_gpu=contender(0.004, "/GPU:0"), dense_gpu_mixed=contender(0.005, "/GPU:0"),
                    dense_gpu_speedup=0.5, dense_mixed_speedup=0.8, mixed_precision={"tried": True, "reason": None})
    outcome = judged(workload_facts(gpu=True, training_step=training))
    assert outcome.status is Status.PASS
    assert any("The small dense model trains faster on the CPU" in d for d in outcome.details)
    assert any("Mixed precision made the dense step slower" in d for d in outcome.details)
    assert ["training_step", "dense step", "GPU 4.00 ms / GPU fp16 5.00 ms / CPU 2.00 ms"] in outcome.evidence["table"]


def test_swap_growth_warns_to_close_other_programs():
    memory = workload_facts()["tensorflow"]["workload"]["memory"]
    memory.update(swap_end_mb=900.0, swap_growth_mb=900.0)
    outcome = judged(workload_facts(memory=memory))
    assert outcome.status is Status.WARN and "swap grew by 900 MiB" in outcome.summary
    assert "Close other programs" in outcome.remediation.advice


def test_too_few_blocks_is_inconclusive():
    conv = workload_facts()["tensorflow"]["workload"]["conv2d"]
    conv["cpu_backward"] = contender(0.05, blocks=2)
    outcome = judged(workload_facts(conv2d=conv))
    assert outcome.status is Status.WARN and outcome.summary.startswith("Inconclusive: fewer than 3 timed blocks")
    assert "conv2d cpu_backward" in outcome.summary


def test_noise_is_reported_not_blamed():
    dispatch = workload_facts()["tensorflow"]["workload"]["dispatch"]
    dispatch["function"]["spread"] = 2.15
    outcome = judged(workload_facts(dispatch=dispatch))
    assert outcome.status is Status.PASS
    assert any("worst: dispatch function, interquartile range 215% of the median block" in d for d in outcome.details)



@pytest.mark.parametrize("probed, said", [(240.0, False), (200.0, False), (150.0, True), (400.0, True)])
def test_a_machine_whose_speed_changed_during_the_run_is_said(probed, said):
    # the crossover of workload_facts timed 2048x2048 at 240 GFLOPS; the probe timed the same size before it
    facts = workload_facts()
    facts["tensorflow"]["probe"] = {"status": "ok", "sides": {"cpu": probe_side("CPU", probed, n=2048)}}
    outcome = workload.run(facts)
    assert outcome.status is Status.PASS
    notes = [d for d in outcome.details if "speed changed while tfdoctor ran" in d]
    assert bool(notes) is said
    if said:
        assert f"ran at {probed:.0f} GFLOPS, the workload's at 240 GFLOPS" in notes[0]


def test_a_probe_at_a_size_the_crossover_did_not_reach_says_nothing():
    facts = workload_facts()
    facts["tensorflow"]["probe"] = {"status": "ok", "sides": {"cpu": probe_side("CPU", 50.0, n=4096)}}
    assert not any("speed changed" in d for d in workload.run(facts).details)

def test_a_section_that_raised_warns_with_its_error():
    outcome = judged(workload_facts(input_pipeline={"status": "error", "error": {
        "type": "AttributeError", "message": "module 'tensorflow' has no attribute 'data'"}}))
    assert outcome.status is Status.WARN
    assert outcome.summary == "The input_pipeline workload raised AttributeError: module 'tensorflow' has no attribute 'data'"
    assert outcome.evidence["table"][0][0] == "crossover"  # the sections that ran keep their figures


def test_a_child_killed_during_the_workload_fails():
    facts = workload_facts()
    facts["tensorflow"].update(status="crashed", stage="workload:conv2d", signal="SIGSEGV", exit_code=-11)
    facts["tensorflow"]["workload"]["status"] = "running"
    outcome = judged(facts)
    assert outcome.status is Status.FAIL
    assert outcome.summary.startswith("The TensorFlow child died of SIGSEGV") and "(conv2d)" in outcome.summary


def test_without_deep_it_skips():
    facts = workload_facts()
    del facts["tensorflow"]["workload"]
    outcome = judged(facts)
    assert outcome.status is Status.SKIP and "--deep" in outcome.summary


def test_crossover_rule_of_the_child():
    from tfdoctor.child.workload import crossover_of

    def rows(*speedups):
        return [{"n": 64 * 2 ** i, "gpu_speedup": s} for i, s in enumerate(speedups)]

    assert crossover_of(rows(0.2, 0.8, 1.5, 3.0)) == {"outcome": "crossover", "crossover_n": 256}
    assert crossover_of(rows(0.2, 1.1, 0.9, 3.0)) == {"outcome": "crossover", "crossover_n": 512}  # a dip: wins from there on
    assert crossover_of(rows(1.2, 2.0)) == {"outcome": "gpu_faster_everywhere", "crossover_n": 64}
    assert crossover_of(rows(0.5, 0.9)) == {"outcome": "cpu_faster_everywhere", "crossover_n": None}
    assert crossover_of(rows(1.5, 0.9)) == {"outcome": "cpu_faster_everywhere", "crossover_n": None}
    assert crossover_of([{"n": 64, "cpu": {}}]) == {"outcome": "cpu_only"}


def test_explain_rejudges_a_saved_workload(tmp_path):
    facts = workload_facts(gpu=True, crossover=ladder({64: 10.0, 2048: 240.0}, {64: 1.0, 2048: 120.0}))
    document = {"schema_version": "1.0", "facts": facts}
    code, out, err = run_cli(["explain", write(tmp_path, document), "--json", "--only", "workload"])
    assert code == 0, err
    result = json.loads(out)["results"][0]
    assert result["id"] == "workload" and result["status"] == "warn"
    assert "slower than the CPU at every matmul size" in result["summary"]
    code, text, err = run_cli(["explain", write(tmp_path, document), "--only", "workload"])
    assert "crossover" in text and "CPU wins at every size" in text  # the compact table, in the text report
    code, markdown, err = run_cli(["explain", write(tmp_path, document), "--format", "markdown", "--only", "workload"])
    assert "| crossover | verdict | CPU wins at every size |" in markdown


@pytest.mark.parametrize("bad", [{"status": "exploded"}, {"crossover": {"sizes": [{"n": "big"}]}},
                                 {"dispatch": {"eager": {"blocks": -1}}}])
def test_the_schema_rejects_wrong_workload_shapes(bad):
    facts = workload_facts()
    facts["tensorflow"]["workload"].update(bad)
    assert not FACTS_VALIDATOR.is_valid(facts)
