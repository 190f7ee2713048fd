"""README's test command is the one CI runs, the documented contracts match the code, and README stays
short with every `tfdoctor` command and link in it working, and the Python example it links to
(docs/api.md) running."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
from typer.main import get_command

from tfdoctor.report import run as report

try:  # newer typer vendors click as typer._click; older typer runs on click itself
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import UsageError

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _command_after(heading: str) -> str:
    section = README.split(heading, 1)[1]
    return re.search(r"```sh\n(.+?)\n```", section, re.S).group(1).strip()


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _command_after("## Run the tests") in ci.splitlines()


def test_readme_documents_the_exit_codes_the_code_uses():
    for code in (report.EXIT_OK, report.EXIT_PROBLEMS, report.EXIT_UNUSABLE, report.EXIT_NOT_POSTED,
                 report.EXIT_INTERRUPTED, report.EXIT_TERMINATED):
        assert re.search(rf"^\| `?{code}`? \|", README, re.M), f"exit code {code} not in README's table"


# --- README stays short, and every command, link and example in it works (issue 21) ------------------

README_LINE_LIMIT = 250
SHELL_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", ">", ">>", "<", "|&"}
SHELL_KEYWORDS = {"!", "if", "then", "else", "elif", "do", "while", "until", "time"}


def _blocks(*languages: str) -> list[str]:
    return [body for language, body in re.findall(r"^```(\w*)\n(.*?)^```", README, re.S | re.M)
            if language in languages]


def _tfdoctor_arguments(line: str) -> Optional[list[str]]:
    """The arguments of the first `tfdoctor` (or `python -m tfdoctor`) command on a shell line, or None.
    Shell operators end a command; comments are dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = list(lexer)
    start = 0
    for end in [i for i, word in enumerate(words) if word in SHELL_OPERATORS] + [len(words)]:
        command = words[start:end]
        start = end + 1
        while command and (command[0] in SHELL_KEYWORDS or re.match(r"^\w+=", command[0])):
            command = command[1:]
        if command and Path(command[0]).name == "tfdoctor":
            return command[1:]
        if len(command) >= 3 and Path(command[0]).name.startswith("python") and command[1:3] == ["-m", "tfdoctor"]:
            return command[3:]
    return None


def _readme_tfdoctor_commands() -> list[list[str]]:
    return [arguments for block in _blocks("sh", "bash") for line in block.splitlines()
            if (arguments := _tfdoctor_arguments(line)) is not None]


def parse_with_real_cli(arguments: list[str]) -> None:
    """Parse `tfdoctor ARGUMENTS` as the real CLI does, subcommand included, without running anything:
    an unknown option, command or bad value raises the CLI's usage error."""
    from tfdoctor.cli.app import app

    group = get_command(app)
    context = group.make_context("tfdoctor", list(arguments), resilient_parsing=False)
    # what follows the group's options: the subcommand and its arguments (click keeps the name apart)
    rest = [*getattr(context, "_protected_args", getattr(context, "protected_args", [])), *context.args]
    if rest:
        name, command, command_arguments = group.resolve_command(context, rest)
        command.make_context(name, command_arguments, parent=context, resilient_parsing=False)


def test_readme_is_at_most_250_lines():
    assert len(README.splitlines()) <= README_LINE_LIMIT


def test_readme_shows_the_commands_people_use():
    commands = _readme_tfdoctor_commands()
    first_words = {arguments[0] if arguments else "" for arguments in commands}
    assert {"", "--json", "explain", "diff", "fix", "scan"} <= first_words, first_words


@pytest.mark.parametrize("arguments", _readme_tfdoctor_commands(), ids=lambda arguments: " ".join(["tfdoctor", *arguments]))
def test_every_readme_command_is_accepted_by_the_cli(arguments):
    parse_with_real_cli(arguments)


@pytest.mark.parametrize("arguments", [["--jsn"], ["--timeout", "soon"], ["fix", "--yess"], ["repair"],
                                       ["scan", "--depth", "-1"]], ids=" ".join)
def test_the_parser_check_rejects_what_the_cli_rejects(arguments):
    with pytest.raises(UsageError):
        parse_with_real_cli(arguments)


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_readme_links_to_docs_and_its_own_sections_resolve():
    links = re.findall(r"\]\(((?:docs/[^)#]+\.md)?)(?:#([^)]+))?\)", README)
    docs = {target for target, _ in links if target}
    assert {"docs/architecture.md", "docs/performance.md", "docs/testing.md"} <= docs
    for target, anchor in links:
        path = ROOT / target if target else None
        assert path is None or path.is_file(), f"README links to {target}, which does not exist"
        if anchor:
            text = path.read_text(encoding="utf-8") if path else README
            assert anchor in _anchors(text), f"README links to {target or 'README'}#{anchor}: no such heading"


API_DOC = ROOT / "docs" / "api.md"  # README links to it; the Python example moved there to keep README short


def _python_example() -> str:
    (example,) = [body for language, body in re.findall(r"^```(\w*)\n(.*?)^```", API_DOC.read_text(encoding="utf-8"),
                                                        re.S | re.M) if language == "python"]
    return example


def test_readme_links_to_the_api_doc_that_holds_the_python_example():
    assert "](docs/api.md)" in README and not _blocks("python")


def test_api_doc_python_example_compiles():
    compile(_python_example(), "docs/api.md", "exec")


@pytest.mark.integration
def test_api_doc_python_example_runs(tmp_path):
    """Run as written, in a fresh interpreter: it diagnoses this environment (TensorFlow imports in the
    doctor's child process) and judges the report again. A directory without pyproject.toml: no config."""
    done = subprocess.run([sys.executable, "-c", _python_example()], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    verdict, status = done.stdout.splitlines()[:2]
    assert verdict in {"True 0", "False 1"}
    assert status in {"pass", "warn", "fail", "skip", "error"}
    assert "tensorflow-import" in done.stdout


def test_readme_mcp_configuration_is_json_whose_command_the_cli_accepts():
    import json

    (block,) = _blocks("json")
    (server,) = json.loads(block)["mcpServers"].values()
    # an absolute interpreter and `-m tfdoctor`: what works for a venv install (issue 36), the assistant having no PATH
    assert server["command"].startswith("/") and server["command"].endswith("/python")
    assert server["args"][:2] == ["-m", "tfdoctor"] and server["args"][2:] == ["mcp"]
    parse_with_real_cli(server["args"][2:])
    parse_with_real_cli([*server["args"][2:], "--allow-fix"])  # the variant README names
    assert '"args": ["-m", "tfdoctor", "mcp", "--allow-fix"]' in README
