"""What `tfdoctor fix` finds on disk is data for one environment, never orders (issue 35), tried on real small
venvs (tests/fixer_support.py): a rollback record planted in an environment, whose roots name a folder outside it,
whose snapshot is a link to one, whose `python` is a program, or that is simply not this user's; a journal at phase
"aside"; a record copied with its environment to the same path; records of two system-kind interpreters; and the
fixer's own files (lock owner, journal, undeletable list, the state directory) planted as links.

Each was checked to fail on main at 9527ef8 (this module and tests/fixer_support.py copied into `git worktree add`
of that commit; `fixer_support.doctor_argv` runs the tfdoctor of the checkout the tests live in), except the two
marked as guards."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Optional

import pytest

from tests import fixer_support as fs

pytestmark = pytest.mark.skipif(os.name != "posix", reason="venv layout, links and modes as POSIX has them")
STAMP = "20990101T000000.000000-abcdef"  # named as `create` names a record, newer than any real one


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("fixrecords")
    wheels, base, env = fs.build_world(root)
    return root, wheels, base, env


@pytest.fixture()
def own_cache(world, monkeypatch):
    """In-process runs use the world's cache, as its subprocesses do (never the user's)."""
    monkeypatch.setenv("XDG_CACHE_HOME", world[3]["XDG_CACHE_HOME"])


def _target(world, name: str) -> Path:
    root, _, base, _ = world
    return fs.copy_venv(base, root / name)


def _victim(directory: Path) -> Path:
    """A folder of someone's files outside every environment."""
    (directory / "docs").mkdir(parents=True)
    (directory / "thesis.tex").write_text("five years of work\n")
    (directory / "docs" / "notes.txt").write_text("precious\n")
    return directory


def _files(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(directory.rglob("*"))}


def _plant(target: Path, roots: list[str], python: Optional[str] = None, tree: Optional[Path] = None,
           journal: Optional[str] = None, version: int = 1) -> Path:
    """A record placed in the environment as the issue's attacker placed one: its prefix is the environment's."""
    directory = target / ".tfdoctor" / "rollback" / STAMP
    (directory / "tree").mkdir(parents=True)
    if tree is not None:
        (directory / "tree" / "0").symlink_to(tree)
    else:
        (directory / "tree" / "0").mkdir()
        (directory / "tree" / "0" / "planted.txt").write_text("the attacker's file\n")
    record = {"version": version, "created_at": "2099-01-01T00:00:00+00:00",
              "python": python or str(target / "bin" / "python"), "prefix": str(target), "kind": "venv",
              "roots": roots, "freeze": fs.freeze(target), "plan": {}}
    (directory / "record.json").write_text(json.dumps(record))
    if journal is not None:
        (directory / "journal.jsonl").write_text(journal)
    return directory


def test_a_planted_record_whose_roots_are_outside_touches_nothing_and_says_why(world, tmp_path):
    """main: `--undo --yes` moved the folder's files aside, put the record's in their place, said "Restored"."""
    _, _, _, env = world
    target = _target(world, "roots-outside")
    victim = _victim(tmp_path / "victim")
    before, files = fs.hashes(target), _files(victim)
    _plant(target, roots=[str(victim)])
    undone = fs.undo(target, env)
    assert undone.returncode != 0, undone.stdout + undone.stderr
    assert "refused the rollback record" in undone.stderr and "it would restore" in undone.stderr, undone.stderr
    assert str(victim) in undone.stderr  # the reason names what it would have touched
    assert "Restored" not in undone.stdout
    assert _files(victim) == files
    assert fs.hashes(target) == before


def test_a_planted_journal_at_phase_aside_makes_a_plain_fix_move_nothing(world, tmp_path):
    """main: a plain `fix` (no --yes, no terminal) first "completed" the planted restore: the environment's entries
    moved aside and the files of the folder the snapshot links to moved into the environment, unasked."""
    _, _, _, env = world
    target = _target(world, "journal-aside")
    victim = _victim(tmp_path / "victim")
    before, files = fs.hashes(target), _files(victim)
    _plant(target, roots=[str(target)], tree=victim, journal='{"phase": "aside"}\n')
    fixed = fs.fix(target, env)
    assert fixed.returncode != 0, fixed.stdout + fixed.stderr
    assert "refused the rollback record" in fixed.stderr, fixed.stdout + fixed.stderr
    assert _files(victim) == files
    assert fs.hashes(target) == before
    assert not (target / ".tfdoctor" / "rollback" / STAMP / "replaced").exists(), "something was moved aside"


def test_a_record_this_user_never_wrote_is_refused_even_inside_the_environment(world):
    """A record that names only the environment itself, planted there: main restored its snapshot (the planted file
    appeared in the prefix). No seal of this user's tfdoctor is kept for it: refused."""
    _, _, _, env = world
    target = _target(world, "unsealed")
    before = fs.hashes(target)
    _plant(target, roots=[str(target)], version=2)
    undone = fs.undo(target, env)
    assert undone.returncode != 0, undone.stdout + undone.stderr
    assert "no seal of this user's tfdoctor" in undone.stderr, undone.stderr
    assert not (target / "planted.txt").exists()
    assert fs.hashes(target) == before


def test_the_records_python_is_never_run(world, tmp_path):
    """main: `--undo` checked the restore with the record's `python`, whatever program it named."""
    _, _, _, env = world
    target = _target(world, "record-python")
    marker = tmp_path / "ran"
    program = tmp_path / "not-python"
    program.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    program.chmod(0o755)
    _plant(target, roots=[str(target)], python=str(program))
    undone = fs.undo(target, env)
    assert undone.returncode != 0, undone.stdout + undone.stderr
    assert not marker.exists(), "the record's program ran"


def test_a_sealed_record_is_checked_with_the_users_interpreter_not_its_own(world, tmp_path, own_cache):
    """Guard (the seal is new): even a record this user's tfdoctor sealed runs only the interpreter passed."""
    from tfdoctor.fixer import flow, rollback
    from tfdoctor.fixer.environment import Environment

    target = _target(world, "sealed-python")
    marker = tmp_path / "ran"
    program = tmp_path / "not-python"
    program.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    program.chmod(0o755)
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    way_back = rollback.create(environment, {"steps": []})
    record = dict(way_back.record, python=str(program))
    data = json.dumps(record).encode()
    (way_back.directory / "record.json").write_bytes(data)
    seal = json.loads(way_back.seal.read_text())
    way_back.seal.write_text(json.dumps(dict(seal, sha256=hashlib.sha256(data).hexdigest())))  # sealed as written
    assert flow._undo(environment, environment.python, Recorder(), yes=True) == flow.EXIT_REPAIRED
    assert not marker.exists(), "the record's program ran"


def test_a_record_copied_with_its_environment_to_the_same_path_is_refused(world, own_cache):
    """A fixed environment copied away and back to its own path (a backup restored, a cache put back): main undid
    the copy's record as if it were the environment's own."""
    from tfdoctor.fixer import rollback
    from tfdoctor.fixer.environment import Environment

    root, _, _, env = world
    target = _target(world, "copied-back")
    rollback.create(Environment(str(target / "bin" / "python"), str(target), "venv"), {"steps": []})
    (fs.site_packages(target) / "fixed.pth").write_text("\n")  # what the fix changed
    assert fs.run(["cp", "-a", target, root / "copied-back.bak"]).returncode == 0
    assert fs.run(["rm", "-rf", target]).returncode == 0
    os.rename(root / "copied-back.bak", target)
    after = fs.hashes(target)
    undone = fs.undo(target, env)
    assert undone.returncode != 0, undone.stdout + undone.stderr
    assert "made for another environment" in undone.stderr, undone.stderr
    assert fs.hashes(target) == after


class Recorder:
    def __init__(self) -> None:
        self.said: list[str] = []

    def progress(self, text):
        import contextlib

        return contextlib.nullcontext()

    def say(self, text, style=""):
        self.said.append(text)

    def plan(self, document):
        pass

    def confirm(self, question):
        return False

    def can_ask(self):
        return False


def test_three_fixes_of_one_system_python_leave_anothers_record(world, tmp_path, own_cache):
    """main: system and externally managed Pythons shared one folder in the user's cache, pruned to the newest
    three across all of them: after three fixes of one, `--undo` of the other said "nothing to undo"."""
    from tfdoctor.fixer import flow, rollback
    from tfdoctor.fixer.environment import Environment

    first, other = _target(world, "system-one"), _target(world, "system-two")

    def as_system(venv: Path) -> Environment:  # venvs stand in for two system interpreters (never the real one)
        return Environment(str(venv / "bin" / "python"), str(venv), "system", (str(fs.site_packages(venv)),))

    before = fs.freeze(other)
    rollback.create(as_system(other), {"steps": []})
    site = fs.site_packages(other)
    (site / "added-0.1.dist-info").mkdir()
    (site / "added-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: added\nVersion: 0.1\n")
    for _ in range(rollback.KEEP):
        rollback.create(as_system(first), {"steps": []})
    ui = Recorder()
    assert flow._undo(as_system(other), str(other / "bin" / "python"), ui, yes=True) == flow.EXIT_REPAIRED, ui.said
    assert fs.freeze(other) == before
    assert rollback.newest(as_system(first)) is not None, "the first interpreter's records are its own"


def test_a_lock_owner_planted_as_a_link_leaves_its_target_alone(world, tmp_path, own_cache):
    """main: the owner file was written through the link (as root: any file on the machine)."""
    from tfdoctor.fixer import ownership
    from tfdoctor.fixer.environment import Environment

    target = _target(world, "lock-owner")
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    victim = tmp_path / "victim.conf"
    victim.write_text("precious\n")
    home = ownership.lock_home(environment)
    home.mkdir(parents=True)
    (home / ownership.OWNER).symlink_to(victim)
    with ownership.owning(environment):
        assert json.loads((home / ownership.OWNER).read_text())["pid"] == os.getpid()
    assert victim.read_text() == "precious\n"


def test_a_lock_file_planted_as_a_link_is_refused(world, tmp_path, own_cache):
    """Guard (held on main with filelock 4.x, which opens it without following; on Python 3.9 filelock cannot be
    past 3.19, and the doctor refuses it itself)."""
    from tfdoctor.fixer import ownership
    from tfdoctor.fixer.environment import Environment, FixError

    target = _target(world, "lock-file")
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    victim = tmp_path / "victim.conf"
    victim.write_text("precious\n")
    home = ownership.lock_home(environment)
    home.mkdir(parents=True)
    (home / ownership.LOCK).symlink_to(victim)
    with pytest.raises(FixError, match="symbolic link"):
        with ownership.owning(environment):
            pass
    assert victim.read_text() == "precious\n"


def test_a_journal_planted_as_a_link_is_neither_written_nor_followed(world, tmp_path, own_cache):
    """main: the restore appended its journal lines to whatever file the link named."""
    from tfdoctor.fixer import flow, rollback
    from tfdoctor.fixer.environment import Environment, FixError

    target = _target(world, "journal-link")
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    way_back = rollback.create(environment, {"steps": []})
    victim = tmp_path / "victim.conf"
    victim.write_text("precious\n")
    (way_back.directory / "journal.jsonl").symlink_to(victim)
    before = fs.hashes(target)
    try:
        flow._undo(environment, environment.python, Recorder(), yes=True)
        refusal = ""
    except FixError as exc:
        refusal = str(exc)
    assert victim.read_text() == "precious\n"
    assert "symbolic link" in refusal
    assert fs.hashes(target) == before


def test_a_journal_line_that_names_a_place_outside_is_refused_before_any_move(world, tmp_path, own_cache, monkeypatch):
    """A restore cut short (its journal is this user's), then a line added naming a file outside: main went on
    with the restore; refused now, and nothing more moves."""
    from tfdoctor.fixer import rollback
    from tfdoctor.fixer.environment import Environment, FixError

    target = _target(world, "journal-outside")
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    way_back = rollback.create(environment, {"steps": []})
    real_rename = os.rename
    moved: list[str] = []

    def dying_rename(source, destination, *args, **kwargs):
        if moved:
            raise SystemExit("killed")
        moved.append(str(source))
        return real_rename(source, destination, *args, **kwargs)

    monkeypatch.setattr(os, "rename", dying_rename)
    with pytest.raises(SystemExit):
        rollback.restore(way_back)
    monkeypatch.setattr(os, "rename", real_rename)
    victim = _victim(tmp_path / "victim")
    with open(way_back.directory / "journal.jsonl", "a") as journal:
        journal.write(json.dumps({"move": str(victim / "thesis.tex"), "to": str(target / "thesis.tex")}) + "\n")
    entries = sorted(os.listdir(target))
    with pytest.raises(FixError, match="outside"):
        rollback.interrupted(environment)
    assert sorted(os.listdir(target)) == entries
    assert (victim / "thesis.tex").read_text() == "five years of work\n"


def test_the_undeletable_list_planted_as_a_link_leaves_its_target_alone(world, tmp_path, own_cache, monkeypatch):
    """main: the list of leftovers already reported was written through the link."""
    from tfdoctor.fixer import rollback
    from tfdoctor.fixer.environment import Environment

    target = _target(world, "undeletable")
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    home = target / ".tfdoctor" / "rollback"
    leftover = home / "20200101T000000.000000-abcdef"
    (leftover / "tree").mkdir(parents=True)
    victim = tmp_path / "victim.conf"
    victim.write_text("precious\n")
    (home / rollback.REPORTED).symlink_to(victim)
    monkeypatch.setattr(rollback, "remove", lambda path: None)  # a leftover that cannot be removed (chattr +i)
    messages = rollback.sweep(environment, rollback.leftovers(environment))
    assert messages and "cannot be removed" in messages[0]
    assert victim.read_text() == "precious\n"


def test_a_state_directory_planted_as_a_link_gets_no_snapshot(world, tmp_path, own_cache):
    """main: the record and a hard-link snapshot of the whole environment were written into the folder the
    environment's `.tfdoctor` linked to."""
    from tfdoctor.fixer import rollback
    from tfdoctor.fixer.environment import Environment, FixError

    target = _target(world, "state-link")
    elsewhere = _victim(tmp_path / "elsewhere")
    files = _files(elsewhere)
    (target / ".tfdoctor").symlink_to(elsewhere)
    environment = Environment(str(target / "bin" / "python"), str(target), "venv")
    try:
        rollback.create(environment, {"steps": []})
        refusal = ""
    except FixError as exc:
        refusal = str(exc)
    assert _files(elsewhere) == files
    assert "symbolic link" in refusal
