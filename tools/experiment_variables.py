"""Generate tfdoctor/knowledge/experiment_variables.toml: the environment variables that TensorFlow,
Keras, tf-keras and protobuf read, found in their installed Python sources, each row citing the file at
the release's tag on GitHub; plus the dynamic loader's variables from its manual pages (issue 29).

The doctor's offline experiments (tfdoctor/collect/experiments.py) unset each of these that is set, to
prove a variable breaks the import. Run it with the venv that holds the releases to read:

    .venv/bin/python tools/experiment_variables.py            # rewrite the table
    .venv/bin/python tools/experiment_variables.py --check    # exit 1 when the table differs
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "tfdoctor" / "knowledge" / "experiment_variables.toml"

# distribution -> (package directory in site-packages, repository, tag of a version, path in the repository)
SOURCES = {
    # the wheel's tensorflow/__init__.py is generated from the repository's api_template.__init__.py
    "tensorflow": ("tensorflow", "tensorflow/tensorflow", lambda v: f"v{v}",
                   lambda p: "tensorflow/api_template.__init__.py" if p == "tensorflow/__init__.py" else p),
    "keras": ("keras", "keras-team/keras", lambda v: f"v{v}", lambda p: p),
    "tf-keras": ("tf_keras", "keras-team/tf-keras", lambda v: f"v{v}", lambda p: p),
    # protobuf's Python 6.31.1 is the repository's v31.1 release, its sources under python/
    "protobuf": ("google/protobuf", "protocolbuffers/protobuf", lambda v: "v" + ".".join(v.split(".")[1:]),
                 lambda p: f"python/{p}"),
}
BUILDS = ("tensorflow", "tensorflow-cpu", "tensorflow-intel", "tensorflow-macos", "tf-nightly")
READ = re.compile(r"""os\.(?:environ\.get|getenv)\(\s*['"]([A-Z][A-Z0-9_]+)['"]"""
                  r"""|os\.environ\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\]"""
                  r"""|['"]([A-Z][A-Z0-9_]+)['"]\s+(?:not\s+)?in\s+os\.environ""")
# Read by test harnesses, IDEs or distributed launchers, never at `import tensorflow` in user code.
NOT_USERS = re.compile(r"^(TEST_|TRT_TEST|PYCHARM_|SKIP_|TPU_|KERAS_DISTRIBUTION_|TF_CONFIG$|TF_NP_|"
                       r"TF_COORDINATOR_|TF_PS_|TF_PSS_|TF_CLUSTER_|GRPC_)")
# Set by the doctor itself for its children (so its log lines are seen): never an experiment's suspect.
SET_BY_THE_DOCTOR = {"TF_CPP_MIN_LOG_LEVEL"}

# The dynamic loader's variables: read before any Python runs, from the manual pages.
LOADER = (
    ("LD_LIBRARY_PATH", "loader", "https://man7.org/linux/man-pages/man8/ld.so.8.html"),
    ("LD_PRELOAD", "loader", "https://man7.org/linux/man-pages/man8/ld.so.8.html"),
    ("DYLD_LIBRARY_PATH", "loader", "https://keith.github.io/xcode-man-pages/dyld.1.html"),
    ("DYLD_FALLBACK_LIBRARY_PATH", "loader", "https://keith.github.io/xcode-man-pages/dyld.1.html"),
    ("DYLD_INSERT_LIBRARIES", "loader", "https://keith.github.io/xcode-man-pages/dyld.1.html"),
    ("DYLD_FRAMEWORK_PATH", "loader", "https://keith.github.io/xcode-man-pages/dyld.1.html"),
)


def site_packages() -> Path:
    return Path(metadata.distribution("packaging").locate_file(""))


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def found_in(root: Path, package: str) -> dict[str, str]:
    """{variable: the first file (relative to site-packages) that reads it}, files in sorted order."""
    found: dict[str, str] = {}
    for path in sorted((root / package).rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if "/_vendor/" in relative or "/tests/" in relative or relative.endswith("_test.py"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in READ.finditer(text):
            name = next(group for group in match.groups() if group)
            if not NOT_USERS.match(name) and name not in SET_BY_THE_DOCTOR:
                found.setdefault(name, relative)
    return found


def rows() -> list[dict[str, str]]:
    root = site_packages()
    table: dict[str, dict[str, str]] = {}
    for distribution, (package, repository, tag, in_repository) in SOURCES.items():
        version = next(filter(None, map(installed_version, BUILDS))) if distribution == "tensorflow" \
            else installed_version(distribution)
        if version is None or not (root / package).is_dir():
            continue
        for name, relative in found_in(root, package).items():
            table.setdefault(name, {"name": name, "read_by": distribution,
                                    "source": f"https://github.com/{repository}/blob/{tag(version)}/{in_repository(relative)}"})
    for name, reader, url in LOADER:
        table[name] = {"name": name, "read_by": reader, "source": url}
    return [table[name] for name in sorted(table)]


def render(found: list[dict[str, str]]) -> str:
    lines = ["# Generated by tools/experiment_variables.py (do not edit): the environment variables TensorFlow,",
             "# Keras, tf-keras and protobuf read (found in their Python sources at the release tag) and the dynamic",
             "# loader's (its manual pages). The offline experiments unset each one that is set (issue 29).",
             ""]
    for row in found:
        lines += ["[[variables]]", f'name = "{row["name"]}"', f'read_by = "{row["read_by"]}"',
                  f'source = "{row["source"]}"', "verified = true", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table differs")
    args = parser.parse_args()
    text = render(rows())
    if args.check:
        same = TABLE.exists() and TABLE.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{TABLE} differs")
        return 0 if same else 1
    TABLE.write_text(text, encoding="utf-8")
    print(f"{TABLE}: {text.count('[[variables]]')} variables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
