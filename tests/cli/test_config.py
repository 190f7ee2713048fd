"""[tool.tfdoctor] and --config: what is accepted, and one line naming the file and key for the rest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfdoctor.diagnosis.config import Config, ConfigError, Requirements, find_pyproject, load_config, parse_table


def test_a_full_table():
    config = parse_table({"require-gpu": True, "tensorflow": ">=2.16", "python": ">=3.10,<3.13", "min-gflops": 200,
                          "min-gpu-speedup": 2, "only": ["tensorflow-import", "gpu-visible,probe"], "skip": "memory",
                          "strict": True, "timeout": 120}, "pyproject.toml")
    assert config.requirements == Requirements("any", ">=2.16", ">=3.10,<3.13", 200.0, 2.0)
    assert config.only == ("tensorflow-import", "gpu-visible", "probe") and config.skip == ("memory",)
    assert (config.strict, config.timeout, config.source) == (True, 120.0, "pyproject.toml")


@pytest.mark.parametrize("value, kind", [(True, "any"), (False, None), ("metal", "metal"), ("CUDA", "cuda")])
def test_require_gpu_values(value, kind):
    assert parse_table({"require-gpu": value}, "f").requirements.gpu == kind


@pytest.mark.parametrize("table, message", [
    ({"tensorflo": ">=2"}, "f: tool.tfdoctor.tensorflo: unknown key"),
    ({"tensorflow": "2.16"}, "f: tool.tfdoctor.tensorflow: '2.16' is not a PEP 440 specifier (write \">=2.16\""),
    ({"python": ">=3.x"}, "f: tool.tfdoctor.python: '>=3.x' is not a PEP 440 specifier"),
    ({"require-gpu": "rocm"}, "f: tool.tfdoctor.require-gpu: must be true, false"),
    ({"min-gflops": -1}, "f: tool.tfdoctor.min-gflops: must be a positive number"),
    ({"min-gpu-speedup": True}, "f: tool.tfdoctor.min-gpu-speedup: must be a positive number"),
    ({"strict": "yes"}, "f: tool.tfdoctor.strict: must be true or false"),
    ({"timeout": 0}, "f: tool.tfdoctor.timeout: must be a number of seconds"),
    ({"only": [1]}, "f: tool.tfdoctor.only: must be a list"),
])
def test_refusals_name_the_file_and_the_key(table, message):
    with pytest.raises(ConfigError) as caught:
        parse_table(table, "f", "tool.tfdoctor.")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_the_nearest_pyproject_decides(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\nrequire-gpu = true\n')
    inner = tmp_path / "project"
    (inner / "src").mkdir(parents=True)
    assert find_pyproject(inner / "src") == tmp_path / "pyproject.toml"
    assert load_config(cwd=inner / "src").requirements.gpu == "any"
    (inner / "pyproject.toml").write_text('[project]\nname = "x"\n')  # nearer, and without [tool.tfdoctor]
    assert load_config(cwd=inner / "src") == Config()


def test_config_file_of_its_own(tmp_path):
    path = tmp_path / "preflight.toml"
    path.write_text('tensorflow = ">=2.16"\n')
    assert load_config(str(path)).requirements.tensorflow == ">=2.16"
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(str(tmp_path / "missing.toml"))
    path.write_text('tensorflow = \n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(str(path))


def tfdoctor(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True, text=True, cwd=str(cwd),
                          timeout=300)


def test_cli_bad_key_exits_2_with_one_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfdoctor]\nrequire-gpus = true\n')
    run = tfdoctor(tmp_path, "--format", "json")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.count("\n") == 1
    assert run.stderr.startswith(f"tfdoctor: error: {tmp_path / 'pyproject.toml'}: tool.tfdoctor.require-gpus: unknown key")


def test_cli_bad_flag_specifier_exits_2(tmp_path):
    run = tfdoctor(tmp_path, "--require-tensorflow", "2.16", "--only", "requirements")
    assert run.returncode == 2 and run.stderr.startswith("tfdoctor: error: --require-tensorflow: '2.16' is not")
