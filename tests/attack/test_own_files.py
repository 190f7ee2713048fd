"""The doctor's own files are never written or read through a link planted where it keeps them."""

from __future__ import annotations

import os

import pytest

from tfdoctor.files.own_files import UnsafePath, private_dir, read_private, write_private

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links and modes as POSIX has them")


def test_write_replaces_a_planted_link_instead_of_following_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    home = private_dir(tmp_path / "cache" / "tfdoctor", below=tmp_path)
    (home / "lock.owner").symlink_to(victim)
    write_private(home / "lock.owner", '{"pid": 1}')
    assert victim.read_text() == "precious"
    assert not (home / "lock.owner").is_symlink()
    assert (home / "lock.owner").read_text() == '{"pid": 1}'
    assert (home / "lock.owner").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in home.iterdir()] == ["lock.owner"]  # no temporary file left


def test_a_directory_planted_as_a_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "prefix").mkdir()
    (tmp_path / "prefix" / ".tfdoctor").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="symbolic link"):
        private_dir(tmp_path / "prefix" / ".tfdoctor" / "rollback", below=tmp_path / "prefix")
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(UnsafePath):
        write_private(tmp_path / "prefix" / ".tfdoctor" / "record.json", "{}")
    assert list(elsewhere.iterdir()) == []


def test_private_dir_makes_each_component_private(tmp_path):
    made = private_dir(tmp_path / "a" / "b", below=tmp_path)
    assert made.is_dir()
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafePath, match="not a directory"):
        private_dir(tmp_path / "file", below=tmp_path)


def test_read_refuses_a_link_and_a_fifo(tmp_path):
    (tmp_path / "real").write_bytes(b"data")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert read_private(tmp_path / "real") == b"data"
    assert read_private(tmp_path / "real", limit=2) == b"da"
    with pytest.raises(UnsafePath, match="symbolic link"):
        read_private(tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError):
        read_private(tmp_path / "fifo")  # O_RDONLY on a FIFO would wait for a writer: refused before reading
    with pytest.raises(FileNotFoundError):
        read_private(tmp_path / "absent")
