"""`-o PATH` whatever is at PATH: a regular file is replaced whole (its mode kept); a symlink is followed
and its target replaced; a device, FIFO, socket or descriptor (/dev/fd/N, a process substitution) is
written through and stays what it was. Device nodes, FIFOs and links are made in a temporary directory:
nothing here points the doctor at the real /dev."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.fixtures_support import FIXTURES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file types")

REPORT = FIXTURES / "linux" / "cpu-only-tensorflow-cpu-no-gpu.json"
as_root = pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="mknod needs root")


def explain_to(output: str, pass_fds: tuple[int, ...] = (), stdout=subprocess.PIPE,
               umask: int | None = None) -> subprocess.CompletedProcess:
    """`tfdoctor explain REPORT --json -o OUTPUT` in a subprocess (bounded: a blocked open fails the test)."""
    return subprocess.run(
        [sys.executable, "-m", "tfdoctor", "explain", str(REPORT), "--json", "-o", output],
        stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, pass_fds=pass_fds,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def is_report(text: str) -> bool:
    document = json.loads(text)
    return document["schema_version"].startswith("1.") and len(document["results"]) > 5


def one_error_line(run: subprocess.CompletedProcess) -> str:
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith("tfdoctor: error: "), run.stderr
    assert len(lines[0]) < 400
    return lines[0]


def device(path: Path, major: int, minor: int) -> Path:
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(major, minor))
    return path


@as_root
def test_a_character_device_stays_a_device(tmp_path):
    null = device(tmp_path / "null", 1, 3)  # what /dev/null is
    run = explain_to(str(null))
    assert run.returncode == 0, run.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.lstat(null).st_rdev == os.makedev(1, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temporary file left beside it


@as_root
def test_a_full_device_is_one_error_line_and_stays_a_device(tmp_path):
    full = device(tmp_path / "full", 1, 7)  # what /dev/full is: every write fails with ENOSPC
    run = explain_to(str(full))
    assert "No space left on device" in one_error_line(run)
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_a_fifo_delivers_the_report_to_its_reader_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    os.link(fifo, tmp_path / "same.fifo")  # a second name, to release the reader if the FIFO is replaced
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(Path(fifo).read_bytes()), daemon=True)
    reader.start()
    run = explain_to(str(fifo))
    reader.join(10)
    if reader.is_alive():  # the doctor never opened it: let the reader go
        os.close(os.open(tmp_path / "same.fifo", os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    assert run.returncode == 0, run.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and is_report(received[0].decode())


def test_a_unix_socket_gets_the_report_and_stays_a_socket(tmp_path):
    path = tmp_path / "report.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(60)
    received = bytearray()

    def serve() -> None:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        with connection:
            while chunk := connection.recv(65536):
                received.extend(chunk)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    run = explain_to(str(path))
    server.close()
    thread.join(10)
    assert run.returncode == 0, run.stderr
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    assert is_report(received.decode())


def test_a_pipe_given_as_dev_fd_n_like_a_process_substitution(tmp_path):
    read_end, write_end = os.pipe()
    received = bytearray()

    def drain() -> None:
        with os.fdopen(read_end, "rb") as stream:
            received.extend(stream.read())

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        run = explain_to(f"/dev/fd/{write_end}", pass_fds=(write_end,))  # what bash's >(cmd) passes
    finally:
        os.close(write_end)
    thread.join(10)
    assert run.returncode == 0, run.stderr
    assert is_report(received.decode())


def test_stdout_as_dev_fd_1_appends_to_the_file_the_shell_opened(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("earlier output\n")
    inode = os.stat(log).st_ino
    with open(log, "a") as stdout:  # `tfdoctor ... -o /dev/stdout >> log.txt`
        run = explain_to("/dev/fd/1", stdout=stdout)
    assert run.returncode == 0, run.stderr
    text = log.read_text()
    assert os.stat(log).st_ino == inode  # written through, not replaced
    assert text.startswith("earlier output\n") and is_report(text[len("earlier output\n"):])


def test_a_symlink_stays_a_link_and_its_target_gets_the_report_with_its_mode(tmp_path):
    target = tmp_path / "reports" / "latest.json"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o644)
    link = tmp_path / "report.json"
    link.symlink_to(Path("reports") / "latest.json")  # relative, as `ln -s` makes them
    run = explain_to(str(link))
    assert run.returncode == 0, run.stderr
    assert os.path.islink(link) and os.readlink(link) == os.path.join("reports", "latest.json")
    assert is_report(target.read_text())
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert sorted(p.name for p in target.parent.iterdir()) == ["latest.json"]


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "report.json"
    link.symlink_to(tmp_path / "new.json")
    run = explain_to(str(link))
    assert run.returncode == 0, run.stderr
    assert os.path.islink(link) and is_report((tmp_path / "new.json").read_text())


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o640, 0o600])
def test_an_existing_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / "report.json"
    path.write_text("old\n")
    path.chmod(mode)
    run = explain_to(str(path))
    assert run.returncode == 0, run.stderr
    assert is_report(path.read_text())
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path):
    path = tmp_path / "report.json"
    run = explain_to(str(path), umask=0o022)
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644  # as `> FILE` would make it, not 0600


def test_a_hard_link_is_replaced_and_the_other_name_keeps_the_old_report(tmp_path):
    """README: -o replaces a regular file atomically, so a second hard link keeps the previous content."""
    path, other = tmp_path / "report.json", tmp_path / "other-name.json"
    path.write_text("old\n")
    os.link(path, other)
    run = explain_to(str(path))
    assert run.returncode == 0, run.stderr
    assert is_report(path.read_text()) and other.read_text() == "old\n"


def test_a_missing_directory_is_one_error_line(tmp_path):
    run = explain_to(str(tmp_path / "no" / "such" / "report.json"))
    assert "No such file or directory" in one_error_line(run)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_is_one_error_line_and_left_alone(tmp_path):
    (tmp_path / "reports").mkdir()
    run = explain_to(str(tmp_path / "reports"))
    assert "directory" in one_error_line(run)
    assert list((tmp_path / "reports").iterdir()) == []
