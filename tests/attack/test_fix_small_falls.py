"""The rest of issue 25's falls, each on a real small venv (tests/fixer_support.py): secrets in URLs in
every output format and in `fix`'s relayed pip output; the plan that installs TensorFlow; leftovers of
interrupted runs (clones, snapshots without a record) removed and never listed by `scan`; `--dry-run`
offline; `--only` and `--skip` of one check; bidi and zero-width characters. Each was checked to fail on
main at 181ac01 (tests/attack/test_fix_survives.py says how)."""

from __future__ import annotations

import json

import pytest

from tests import fixer_support as fs

SECRETS = ("S3CRET1", "ss-w0rd", "S3CRET2", "S3CRET3")
# the shapes of issue 25: a password holding '@' in the index URL, an Azure SAS signature in find-links,
# a ?key= in an extra index; all on a loopback port nothing listens on (pip fails at once)
LEAKY = {"PIP_INDEX_URL": "http://alice:Pa@ss-w0rd-S3CRET1@127.0.0.1:9/simple",
         "PIP_FIND_LINKS": "http://127.0.0.1:9/links?sv=2022-11-02&sp=r&sig=S3CRET2abc%2Bdef%3D",
         "PIP_EXTRA_INDEX_URL": "http://127.0.0.1:9/extra/simple?key=S3CRET3xyz",
         "PIP_RETRIES": "0", "PIP_TIMEOUT": "2"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("fixsmall")
    wheels, base, env = fs.build_world(root)
    return root, wheels, base, env


def _leaky_environ(env: dict) -> dict:
    leaky = {k: v for k, v in env.items() if k not in ("PIP_NO_INDEX", "PIP_FIND_LINKS")}
    leaky.update(LEAKY)
    return leaky


def _clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret} leaked:\n{text}"


def test_no_secret_url_shape_reaches_any_output_format(world, tmp_path):
    root, _, base, env = world
    python = base / "bin" / "python"
    leaky = _leaky_environ(env)
    saved = tmp_path / "report.md"
    outputs = []
    for args in (["--json"], ["--format", "markdown"], ["-v"], ["--format", "github"],
                 ["--format", "markdown", "-o", saved]):
        result = fs.run(fs.doctor_argv("--python", python, "--only", "dependencies", "--no-probe", *args), env=leaky)
        assert result.returncode in (0, 1), result.stderr
        outputs.append(result.stdout + result.stderr)
    outputs.append(saved.read_text(encoding="utf-8"))
    assert json.loads(outputs[0])["facts"], "the JSON report is whole"
    for text in outputs:
        _clean(text)


def test_fix_relays_pip_output_redacted(world):
    root, _, base, env = world
    target = fs.copy_venv(base, root / "leaky")
    result = fs.fix(target, _leaky_environ(env), "--yes")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "did not work on a copy" in result.stdout  # pip's own lines are relayed ...
    assert "127.0.0.1" in result.stdout + result.stderr
    _clean(result.stdout + result.stderr)  # ... with no secret in them


def test_the_plan_that_installs_tensorflow_is_applied(world):
    """A venv without TensorFlow: the plan installs it (a fake `tensorflow` wheel stands in for the
    index); fix proves it on the copy and applies it (main refused: 'moved TensorFlow ... no check asked')."""
    root, wheels, base, env = world
    fake = (fs.FAKES / "functional_tensorflow.py").read_text(encoding="utf-8")
    fs.wheel(wheels, "tensorflow", fs.TF_VERSION, {"tensorflow/__init__.py": fake.replace('"2.99.0"', repr(fs.TF_VERSION))},
             ("numpy",))
    target = fs.copy_venv(base, root / "no-tensorflow")
    removed = fs.run([target / "bin" / "python", "-m", "pip", "uninstall", "-y", "tensorflow-cpu", "fakedep"], env=env)
    assert removed.returncode == 0, removed.stderr
    # install_integrity aside: the venv's NumPy is linked in without its scripts (a repair of its own)
    result = fs.run(fs.doctor_argv("fix", "--python", target / "bin" / "python", "--skip", "install-integrity", "--yes"),
                    env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Repaired" in result.stdout
    changed = [line.strip() for line in result.stdout.splitlines() if "->" in line]
    assert changed and changed[0].startswith("tensorflow (not installed) -> " + fs.TF_VERSION), result.stdout
    assert fs.run([target / "bin" / "python", "-c", "import tensorflow"], env=env).returncode == 0


def test_leftovers_are_removed_at_the_next_run_and_never_scanned(world, tmp_path):
    root, _, base, env = world
    home = tmp_path / "envs"
    home.mkdir()
    target = fs.copy_venv(base, home / "crumbs")
    clone = home / ".crumbs.tfdoctor-verify-0badf00d"  # a fix interrupted while it proved the plan
    assert fs.run(["cp", "-al", target, clone]).returncode == 0
    cut_snapshot = target / ".tfdoctor" / "rollback" / "20260101T000000.000000-abcdef"  # cut before its record
    (cut_snapshot / "tree" / "0").mkdir(parents=True)
    (cut_snapshot / "tree" / "0" / "pyvenv.cfg").write_text("home = /nowhere\n")
    scanned = fs.run(fs.doctor_argv("scan", home, "--json", "--jobs", "1"), env=env)
    listed = json.dumps(json.loads(scanned.stdout))
    assert "crumbs" in listed and "tfdoctor-verify" not in listed, listed
    undone = fs.undo(target, env)
    assert undone.returncode == 1 and "nothing to undo" in undone.stdout, undone.stdout + undone.stderr
    assert not clone.exists(), "the interrupted fix's clone is still beside the environment"
    assert not cut_snapshot.exists(), "the snapshot without a record is still there"


def test_an_undeletable_leftover_is_reported_once_with_its_size_and_the_command(world, tmp_path, monkeypatch):
    from tfdoctor.fixer import rollback
    from tfdoctor.fixer.environment import Environment

    root, _, base, _ = world
    target = tmp_path / "immutable"
    assert fs.run(["cp", "-al", base, target]).returncode == 0
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    stuck = target / ".tfdoctor" / "rollback" / "20260101T000000.000000-abcdef"
    (stuck / "tree").mkdir(parents=True)
    (stuck / "tree" / "blob").write_bytes(b"x" * 3_000_000)
    monkeypatch.setattr(rollback, "remove", lambda path: None)  # as with immutable files: nothing goes
    first = rollback.sweep(environment, rollback.leftovers(environment))
    assert len(first) == 1 and "3.0 MB" in first[0] and f"rm -rf {stuck}" in first[0], first
    assert rollback.sweep(environment, rollback.leftovers(environment)) == [], "said once"


def test_dry_run_says_offline_when_the_index_is_turned_off(world, tmp_path):
    root, _, base, env = world
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    result = fs.fix(base, {**env, "PIP_FIND_LINKS": str(empty)}, "--dry-run")
    assert "Offline" in result.stdout and "does not resolve" not in result.stdout, result.stdout + result.stderr


def test_only_and_skip_of_one_check_is_an_error(world):
    _, _, base, env = world
    result = fs.run(fs.doctor_argv("--python", base / "bin" / "python", "--only", "dependencies", "--skip",
                                   "dependencies", "--no-probe"), env=env)
    assert result.returncode == 2 and "both --only and --skip" in result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize("fmt", ["markdown", "json", "text"])
def test_bidi_and_zero_width_characters_are_escaped_wherever_a_report_is_rendered(world, tmp_path, fmt):
    _, _, base, env = world
    report = fs.run(fs.doctor_argv("--python", base / "bin" / "python", "--only", "dependencies", "--no-probe",
                                   "--json", "--no-redact"), env=env)
    document = json.loads(report.stdout)
    planted = "evil\u202eexe.txt\u200b\u2066x\u2069\ufeff"
    document["facts"]["python"]["executable"] = planted
    for result in document["results"]:
        result["summary"] = planted
    saved = tmp_path / "hostile.json"
    saved.write_text(json.dumps(document), encoding="utf-8")
    shown = fs.run(fs.doctor_argv("explain", saved, "--format", fmt, "-v"), env=env)
    text = shown.stdout
    assert "evil" in text, shown.stderr
    for character in "\u202e\u200b\u2066\u2069\ufeff":
        assert character not in text, f"U+{ord(character):04X} reached the {fmt} output raw"
