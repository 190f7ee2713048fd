"""A real Mermaid parser for the tests: the `mermaid` npm package, run by node with jsdom as its DOM.

Why this way: Mermaid is a JavaScript library and its parser is the only authority on what GitHub will
draw; a headless browser (mermaid-cli with chromium) would render the same grammar at ten times the cost.
The packages are pinned (mermaid 11.17.2 runs on node 20; 12.x needs node 22) and installed once, with
a short timeout, into a cache directory outside the repository ($TFDOCTOR_TEST_CACHE, else
$XDG_CACHE_HOME or ~/.cache, then tfdoctor-tests/), through a temporary directory renamed into place so
two runs never see half an install. Where node or npm is missing, too old, or the registry cannot be
reached, the tests skip, except in CI (CI=true), where a test that cannot run fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.live.support import in_ci

PACKAGES = {"mermaid": "11.17.2", "jsdom": "29.1.1"}
NODE_AT_LEAST = (20, 19)  # jsdom 29's engines
INSTALL_TIMEOUT_S = 180
PARSE_TIMEOUT_S = 60
SCRIPT = Path(__file__).with_name("mermaid") / "parse.mjs"


def unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"the Mermaid parser cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def cache_root() -> Path:
    explicit = os.environ.get("TFDOCTOR_TEST_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tfdoctor-tests"


def node_version(node: str) -> tuple[int, int]:
    said = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.match(r"v(\d+)\.(\d+)", said.strip())
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def parser_directory() -> Path:
    """A directory whose node_modules holds the pinned packages (installed on first use)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        unavailable("node and npm are needed to run the Mermaid parser")
    if node_version(node) < NODE_AT_LEAST:
        unavailable(f"node {'.'.join(map(str, NODE_AT_LEAST))} or newer is needed (jsdom {PACKAGES['jsdom']})")
    name = "-".join(f"{package}-{version}" for package, version in sorted(PACKAGES.items()))
    target = cache_root() / name
    if (target / "node_modules" / "mermaid" / "package.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        specs = [f"{package}@{version}" for package, version in PACKAGES.items()]
        completed = subprocess.run([npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
                                    "--no-save", "--loglevel=error", *specs],
                                   capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        if completed.returncode != 0:
            unavailable(f"npm install {' '.join(specs)} failed: {completed.stderr.strip()[-500:]}")
        try:
            staging.rename(target)
        except OSError:  # another run installed it meanwhile
            if not (target / "node_modules" / "mermaid" / "package.json").is_file():
                raise
    except subprocess.TimeoutExpired:
        unavailable(f"npm install took longer than {INSTALL_TIMEOUT_S} s")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def parse_markdown(markdown: str, directory: Path) -> list[dict]:
    """What Mermaid makes of every ```mermaid block in `markdown`: one dict per block."""
    script = directory / SCRIPT.name
    script.write_text(SCRIPT.read_text(encoding="utf-8"), encoding="utf-8")
    completed = subprocess.run([shutil.which("node") or "node", str(script)], input=markdown, capture_output=True,
                               text=True, timeout=PARSE_TIMEOUT_S, cwd=str(directory))
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)
