"""Error signatures (tfdoctor/facts/signatures.py): every row matches its public example; signals, gates,
exception chains and noise."""

from __future__ import annotations

import re

import pytest

from tfdoctor.facts import signatures

from tests.import_support import REAL_TEXTS


@pytest.mark.parametrize("text, source, expected", REAL_TEXTS,
                         ids=[f"{e}-{i}" for i, (_, _, e) in enumerate(REAL_TEXTS)])
def test_real_text_is_diagnosed(text, source, expected):
    found = signatures.match_text(text)
    assert found, f"nothing matched the text from {source}"
    assert found[0].signature.id == expected


def test_there_are_at_least_twelve_signatures_with_sources():
    rows = signatures.signatures()
    assert len(rows) >= 12
    for row in rows:
        assert row.source.strip() and isinstance(row.verified, bool)
        assert row.phase in signatures.PHASES
        assert row.patterns or row.signals, row.id
        assert row.examples, f"{row.id} has no example text"
        assert re.match(r"^[a-z0-9.]+(-[a-z0-9.]+)*$", row.id)
    assert len({row.id for row in rows}) == len(rows)


@pytest.mark.parametrize("row", signatures.signatures(), ids=lambda row: row.id)
def test_each_example_matches_its_own_row_first(row):
    for example in row.examples:
        signal = row.signals[0] if row.signals and not row.patterns else None
        found = signatures.match_text(example, phases=(row.phase,), signal=signal, installed=row.requires)
        assert found and found[0].signature.id == row.id, example


def test_fix_actions_are_known():
    for row in signatures.signatures():
        for step in row.fix:
            assert step.action in ("install", "uninstall", "reinstall", "fresh_environment")
            assert step.names or step.action == "fresh_environment"


def test_a_signal_alone_matches_and_requires_gates_a_row():
    assert signatures.match_text("", signal="SIGILL")[0].signature.id == "illegal-instruction"
    assert [m.signature.id for m in signatures.match_text("", signal="SIGSEGV")] == []
    with_metal = signatures.match_text("segmentation fault python3", signal="SIGSEGV", installed=["tensorflow-metal"])
    assert with_metal[0].signature.id == "crash-with-metal-plugin"


def test_a_timeout_is_not_read_as_the_signal_that_ended_it():
    assert signatures.find({"timed_out": True, "signal": "SIGKILL", "stderr_tail": ""}, phases=signatures.PHASES) == []


def test_the_exception_chain_and_traceback_are_searched():
    tf = {"exception": {"type": "ImportError", "message": "Failed to load the native TensorFlow runtime.",
                        "causes": [{"type": "ImportError", "message": "(mach-o file, but is an incompatible "
                                    "architecture (have (x86_64), need (arm64e)))"}]}}
    found = signatures.find(tf)
    assert found[0].signature.id == "mixed-architectures" and found[0].where == "exception"


def test_noise_is_not_flagged_where_no_gpu_is_expected():
    # on a CPU-only machine a CUDA build prints these, harmlessly (https://github.com/tensorflow/tensorflow/issues/62328,
    # https://github.com/tensorflow/tensorflow/issues/74459, https://github.com/kr-colab/ReLERNN/issues/63)
    lines = ("I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used.\n"
             "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
             "'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
             "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: "
             "Attempting to register factory for plugin cuDNN when one has already been registered")
    tf = {"stderr_tail": lines}
    assert signatures.find(tf, phases=("gpu",), gpu_expected=False) == []
    expected = [m.signature.id for m in signatures.find(tf, phases=("gpu",), gpu_expected=True)]
    assert expected == ["cuda-libraries-missing", "cuda-driver-not-found"]


def test_notable_lines_cover_every_pattern_and_the_metal_startup():
    pattern = signatures.notable_pattern()
    for row in signatures.signatures():
        for example in row.examples:
            if row.patterns:
                assert pattern.search(example.encode()), row.id
    metal = b"2024-01-11 11:39:24.910238: I metal_plugin/src/device/metal_device.cc:1154] Metal device set to: Apple M3 Pro"
    assert pattern.search(metal)  # https://github.com/msusol/jupyter-notebook-on-macos/blob/main/tensorflow.md
