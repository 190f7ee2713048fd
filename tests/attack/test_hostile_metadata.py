"""Names from installed metadata are data (issue 35): a distribution's name, version or requirement that is no
plain PEP 508 requirement never reaches pip, uv, conda or a pasted plan line; it is refused and said.

The venv (tests/fixer_support.py: real, small, offline) holds a fake TensorFlow whose import runs through the
top-level modules of four distributions named like pip options and shell code, each requiring tensorflow-cpu
(so the doctor records it), the innermost raising an error no rule explains: each is a suspect the import
error points into, and so a `--prove` candidate. Beside them, a `tensorboard` whose version is shell code
and one of whose files is missing (an exact reinstall `name==version` in the plan). A loopback server
records every request: on main (checked at fab4259 by copying this file into `git archive fab4259`), `--prove`
gave pip `-rhttp://localhost:PORT/req>1.0` and pip fetched it (the server saw `/req%3E1.0`), and the plan
carried `tensorboard==1.0; rm -rf ~` into a reinstall line.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests import fixer_support as fs
from tfdoctor.environment.spell import POSIX, POWERSHELL, Spelling, argv, command
from tfdoctor.results.repairs import Action

# (distribution name, its top-level module); the names keep no dot, which PEP 503 normalisation would turn
# into '-' (a host name with dots would then not resolve, and pip would fetch nothing on main either)
HOSTILE_NAMES = ("-rhttp://localhost:{port}/req", "x $(touch pwned)", "y`touch pwned`", "z;touch pwned")
HOSTILE_VERSION = "1.0; rm -rf ~"


class Recorder:
    """A loopback HTTP server that answers 404 and remembers every path asked for."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                hits.append(self.path)
                self.send_response(404)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _distribution(site: Path, folder: str, name: str, version: str, files: dict[str, str], missing: str = "") -> None:
    """A dist-info written by hand, as a hostile installer would leave it (pip refuses such metadata in a wheel)."""
    for path, text in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text, encoding="utf-8")
    info = site / f"{folder}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                   "Requires-Dist: tensorflow-cpu\n", encoding="utf-8")
    (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    listed = [f"{path},," for path in files] + ([f"{missing},sha256=AAAA,10"] if missing else [])
    (info / "RECORD").write_text("\n".join(listed + [f"{folder}.dist-info/METADATA,,"]) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-names")
    server = Recorder()
    wheels = root / "wheels"
    wheels.mkdir()
    fake = (fs.FAKES / "functional_tensorflow.py").read_text(encoding="utf-8")
    fs.wheel(wheels, "tensorflow-cpu", fs.TF_VERSION,
             {"tensorflow/__init__.py": "import hostile0\n" + fake.replace('"2.99.0"', repr(fs.TF_VERSION))}, ("numpy",))
    base = root / "base"
    python = Path(getattr(sys, "_base_executable", sys.executable))
    assert fs.run([python, "-m", "venv", "--without-pip", base]).returncode == 0
    site = fs.site_packages(base)
    import numpy
    import pip

    for package in (numpy, pip):
        fs.link_distribution(Path(package.__file__).parent, site)
    env = fs.offline_environ(wheels)
    installed = fs.run([base / "bin" / "python", "-m", "pip", "install", "--no-deps", "tensorflow-cpu==" + fs.TF_VERSION],
                       env=env)
    assert installed.returncode == 0, installed.stderr
    names = [name.format(port=server.port) for name in HOSTILE_NAMES]
    for index, name in enumerate(names):  # hostile0 imports hostile1 ... the last raises
        last = index == len(names) - 1
        body = "raise RuntimeError('an error no rule knows')\n" if last else f"import hostile{index + 1}\n"
        _distribution(site, f"hostile{index}-1.0", name, "1.0", {f"hostile{index}/__init__.py": body})
    _distribution(site, "tensorboard-1.0", "tensorboard", HOSTILE_VERSION, {"tensorboard/__init__.py": ""},
                  missing="tensorboard/gone.py")
    yield base, env, names, server
    server.stop()


def test_prove_refuses_candidates_named_like_options_or_shell_code(hostile):
    base, env, names, server = hostile
    result = fs.run(fs.doctor_argv("--python", base / "bin" / "python", "--only", "tensorflow-import", "--no-probe",
                                   "--prove", "--json"), env=env, timeout=300)
    assert result.returncode == 1, result.stderr
    suspects = json.loads(result.stdout)["results"][0]["evidence"].get("suspects") or []
    assert {s["name"] for s in suspects} >= set(names), "the venv no longer makes them suspects: the test tests nothing"
    assert server.hits == [], f"pip fetched what a distribution's name pointed at: {server.hits}"
    refused = [line for line in result.stderr.splitlines() if line.startswith("--prove: refused candidate")]
    assert len(refused) == len(names), result.stderr
    assert "every candidate was refused" in result.stderr and "on a copy" not in result.stderr, result.stderr


def test_the_plan_refuses_a_version_that_is_shell_code_and_says_so(hostile):
    base, env, names, _ = hostile
    result = fs.run(fs.doctor_argv("--python", base / "bin" / "python", "--only", "install-integrity", "--no-probe",
                                   "--json", "--no-redact"), env=env, timeout=300)
    plan = json.loads(result.stdout)["plan"]
    assert any(f"refused 'tensorboard=={HOSTILE_VERSION}'" in note for note in plan["notes"]), plan
    for step in plan["steps"]:
        assert not any("tensorboard" in package for package in step["packages"]), step
        assert "tensorboard" not in step["command"], step
    text = fs.run(fs.doctor_argv("--python", base / "bin" / "python", "--only", "install-integrity", "--no-probe"),
                  env=env, timeout=300)
    assert "refused 'tensorboard==1.0; rm -rf ~'" in text.stdout, text.stdout  # said where the plan is shown
    assert not any("tensorboard" in line and " -m pip " in line for line in text.stdout.splitlines()), text.stdout


# --- the speller: every installer, every shell ----------------------------------------------------------------

HOSTILE_WORDS = [
    "-rhttp://host/req", "--index-url=http://evil/simple", "-e.", "./evil", "/tmp/evil.whl", "x $(touch pwned)",
    "y`touch pwned`", "z;touch pwned", "a\nb", "numpy==1.0; rm -rf ~", "numpy @ http://evil/numpy.whl",
    "numpy>=2 --index-url http://evil", "numpy===anything", "numpy==1.0 ; python_version>'0'", "numpy==1.0\x1b[2J",
]
SPELLINGS = [Spelling("venv", "/v/bin/python"), Spelling("uv", "/v/bin/python"),
             Spelling("managed", "/usr/bin/python3"), Spelling("venv", "C:\\v\\python.exe", POWERSHELL)]


@pytest.mark.parametrize("word", HOSTILE_WORDS)
@pytest.mark.parametrize("action", [Action.INSTALL, Action.REINSTALL, Action.UNINSTALL, Action.REMOVE_METADATA])
def test_the_speller_never_spells_a_hostile_word(word, action):
    from tfdoctor.environment.spell import RefusedWord, refusal

    assert refusal(action, word) is not None
    for spelling in SPELLINGS:
        for manager in (None, "conda") if action is Action.REINSTALL else (None,):
            with pytest.raises(RefusedWord):
                argv(spelling, action, ("numpy==2.0.0" if action is not Action.UNINSTALL else "numpy", word),
                     manager=manager)
            with pytest.raises(RefusedWord):
                command(spelling, action, (word,), manager=manager)


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: f"{s.kind}-{s.shell}")
def test_packages_follow_the_end_of_options(spelling):
    for action, packages in ((Action.INSTALL, ("tensorflow[and-cuda]==2.16.*", "numpy<2")),
                             (Action.REINSTALL, ("tensorflow-cpu==2.21.0+cpu",)), (Action.UNINSTALL, ("tf_keras",))):
        words = argv(spelling, action, packages)
        assert words[-len(packages) - 1:] == ["--", *packages], words
        line = command(spelling, action, packages)
        assert (" '--' " if spelling.shell == POWERSHELL else " -- ") in line, line
    conda = argv(Spelling("conda", "/c/bin/python", POSIX), Action.REINSTALL, ("numpy==1.26.4",),
                 manager="conda", prefix="/c")
    assert conda[-2:] == ["--", "numpy=1.26.4"], conda


def test_pip_reads_a_dash_word_after_the_end_of_options_as_a_requirement(tmp_path):
    """What the speller relies on, run for real: after `--`, pip takes `-r URL` for a (bad) requirement and
    fetches nothing; before it, pip fetches the file (the attack)."""
    server = Recorder()
    config = tmp_path / "pip.conf"
    config.write_text("", encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PIP_CONFIG_FILE": str(config), "PIP_NO_INDEX": "1",
           "PIP_RETRIES": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    word = f"-rhttp://127.0.0.1:{server.port}/req"
    try:
        after = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--", word], env=env,
                               capture_output=True, text=True, timeout=120)
        assert after.returncode != 0 and server.hits == [], (server.hits, after.stderr)
        before = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", word], env=env,
                                capture_output=True, text=True, timeout=120)
        assert server.hits == ["/req"], (server.hits, before.stderr)  # the control: without `--` it is an option
    finally:
        server.stop()
