"""Tests of ``hermes_core/atomic_write.py``: the package's one way to replace a file."""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from hermes_core.atomic_write import read_kept, write_atomic, write_cache


def _litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_threads_of_one_process_writing_one_file_each_land_whole(tmp_path: Path) -> None:
    """Both writers hold their temp file open at once (a pid-named temp was shared by them): each
    must land whole, the second one last, with no error and no temp file left."""
    target = tmp_path / "cache" / "entry.bin"
    both_open = threading.Barrier(2)
    first_landed = threading.Event()
    errors: list[BaseException] = []

    def writer(body: bytes, wait_for_first: bool) -> None:
        def write(f: BinaryIO) -> None:
            f.write(body[:10])
            both_open.wait(timeout=10)
            if wait_for_first:
                assert first_landed.wait(timeout=10)
            f.write(body[10:])
        try:
            write_atomic(target, write)
        except BaseException as e:   # reported below, with the thread's name
            errors.append(e)
        if not wait_for_first:
            first_landed.set()

    long, short = b"A" * 5000, b"B" * 100
    threads = [threading.Thread(target=writer, args=(long, False)),
               threading.Thread(target=writer, args=(short, True))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    assert target.read_bytes() == short        # the later writer's bytes, nothing of the other's
    assert _litter(target.parent) == []


def test_a_writer_failing_half_way_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "entry.json"
    target.write_bytes(b"old")

    def write(f: BinaryIO) -> None:
        f.write(b"half of the new")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomic(target, write)
    assert target.read_bytes() == b"old" and _litter(tmp_path) == []


def test_a_refused_rename_leaves_the_old_file_and_no_temp(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "entry.json"
    target.write_bytes(b"old")

    def refuse(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(os, "replace", refuse)
    assert write_cache(target, b"new", "test cache") is False
    assert target.read_bytes() == b"old" and _litter(tmp_path) == []


def test_a_cache_that_cannot_be_written_is_not_cached_and_warns_once_per_folder(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.DEBUG, logger="hermes_core.atomic_write"):
        results = [write_cache(blocker / f"e{i}.json", b"{}", "test cache") for i in range(5)]
    assert results == [False] * 5
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "test cache: cannot write" in warnings[0].getMessage()
    assert len([r for r in caplog.records if r.levelno == logging.DEBUG]) == 4
    assert blocker.read_text() == "a file where the cache folder should be"


def test_a_cache_write_logs_to_the_callers_logger(tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("x")
    mine = logging.getLogger("hermes_core.some.cache")
    with caplog.at_level(logging.WARNING):
        write_cache(blocker / "e.json", b"{}", "some cache", logger=mine)
    assert [r.name for r in caplog.records] == ["hermes_core.some.cache"]


def test_a_new_file_gets_the_umask_mode_and_a_given_mode_is_kept(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    fresh = tmp_path / "new.txt"
    write_atomic(fresh, b"x")   # mkstemp alone would make it 0600: unreadable to the user's tools
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
    private = tmp_path / "private.txt"
    write_atomic(private, b"y", mode=0o600)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_bytes() == b"y"


def test_the_folder_is_made_when_missing(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.bin"
    assert write_cache(target, b"data", "test cache") is True
    assert target.read_bytes() == b"data"


def test_a_home_cache_write_makes_its_folders_but_never_the_home(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    home = tmp_path / "home"
    home.mkdir()
    target = home / "cache" / "folds" / "k.json"
    assert write_cache(target, b"{}", "test cache", folders=2) is True
    assert target.read_bytes() == b"{}"
    gone = tmp_path / "no-such-home" / "cache" / "k.json"
    with caplog.at_level(logging.DEBUG):
        assert write_cache(gone, b"{}", "test cache", folders=1) is False
    assert not (tmp_path / "no-such-home").exists()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_durable_write_syncs_the_file_and_its_folder_and_a_many_file_cache_need_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(tmp_path / "durable.bin", b"x")
    assert len(synced) == 2                       # the file, then the folder holding the rename
    synced.clear()
    assert write_cache(tmp_path / "vector.npy", b"y", "test cache", durable=False)
    assert synced == [] and (tmp_path / "vector.npy").read_bytes() == b"y"


def test_the_umask_is_read_without_setting_it_where_the_system_states_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Setting the umask to read it gives a file another thread creates meanwhile the wrong mode;
    on Linux /proc/self/status says it, and the module reads it there."""
    from hermes_core import atomic_write

    umask = os.umask(0o027)
    try:
        def no_setting(mask: int) -> int:
            raise AssertionError("the umask was set to read it")

        if Path("/proc/self/status").is_file():
            monkeypatch.setattr(atomic_write.os, "umask", no_setting)
        assert atomic_write._read_umask() == 0o027
    finally:
        monkeypatch.undo()
        os.umask(umask)


def test_read_cache_refuses_a_pipe_a_device_and_a_huge_file_instead_of_hanging(tmp_path: Path) -> None:
    """A cache path made a FIFO hung every prompt build at its read; ``/dev/zero`` never ends."""
    import errno
    import os

    from hermes_core.atomic_write import read_cache
    fifo = tmp_path / "verdicts.log"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_cache(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_cache("/dev/zero")
    big = tmp_path / "big.npy"
    big.write_bytes(b"x" * 101)
    with pytest.raises(OSError) as info:
        read_cache(big, max_bytes=100)
    assert info.value.errno == errno.EFBIG
    assert read_cache(big, max_bytes=101) == b"x" * 101
    with pytest.raises(FileNotFoundError):
        read_cache(tmp_path / "absent")


def test_read_cache_reserves_the_file_s_size_not_the_limit(tmp_path: Path) -> None:
    """``f.read(limit + 1)`` sets aside the whole limit (256 MiB by default) before reading a
    file of a few bytes: a host that does not over-commit memory refused every cache read."""
    import tracemalloc

    from hermes_core.atomic_write import MAX_CACHE_BYTES, read_cache
    small = tmp_path / "terms.bin"
    small.write_bytes(b"y" * 1000)
    tracemalloc.start()
    try:
        assert read_cache(small) == b"y" * 1000
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert MAX_CACHE_BYTES > 2**20
    assert peak < 2**20


def _stat_said_10_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's size read as 10 bytes: what a reader sees when it grew after the stat."""
    from hermes_core import atomic_write
    real_fstat = os.fstat

    def earlier_size(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                               st.st_gid, 10, st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(atomic_write.os, "fstat", earlier_size)


def test_read_cache_refuses_a_file_that_grew_after_its_size_was_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written in place while read (never one of ours: caches are renamed into place) is
    refused, to be recomputed, rather than read up to a size it no longer has."""
    import errno

    from hermes_core import atomic_write
    grown = tmp_path / "terms.bin"
    grown.write_bytes(b"z" * 50)
    _stat_said_10_bytes(monkeypatch)
    with pytest.raises(OSError) as info:
        atomic_write.read_cache(grown)
    assert info.value.errno == errno.EFBIG
    monkeypatch.undo()
    assert atomic_write.read_cache(grown) == b"z" * 50


def test_read_cache_of_a_log_appended_to_while_read_gives_the_whole_lines_there_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The home's scan logs are appended in place by every chat of the home (one ``write`` a
    filing on ``O_APPEND``): one chat starting while another files read its log as grown, so
    unreadable, and scanned every text again. Read as ``appended``, a log that grew is read up to
    its size at the stat, cut after the last whole line there (the rest is a filing in
    progress); one that did not grow is read whole, a torn last line included (damage)."""
    from hermes_core import atomic_write
    log = tmp_path / "descriptions.log"
    log.write_bytes(b"one\ntwo\nthree\nfour\n")
    _stat_said_10_bytes(monkeypatch)
    assert atomic_write.read_cache(log, appended=True) == b"one\ntwo\n"
    monkeypatch.undo()
    log.write_bytes(b"one\ntwo\nthr")
    assert atomic_write.read_cache(log, appended=True) == b"one\ntwo\nthr"


def _version_one(data: object) -> dict[str, object]:
    if not isinstance(data, dict) or data.get("version") != 1:
        raise ValueError("another version")
    return data


@pytest.mark.parametrize(("content", "why"), [
    (b'{"version": 2}', "not a file of ours (another version)"),
    (b"\xff\xfe", "not a file of ours"), (b"[[[", "not a file of ours"),
    (None, "cannot be read"),   # a folder where the file should be
])
def test_a_kept_file_that_is_not_ours_or_unreadable_is_none_and_says_why(
        tmp_path: Path, content: bytes | None, why: str) -> None:
    path = tmp_path / "kept.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    said: list[str] = []
    assert read_kept(path, 1000, _version_one, said.append) is None
    assert len(said) == 1 and said[0].startswith(why)
    assert read_kept(path, 1000, _version_one, None) is None   # quiet: nothing raised


def test_a_kept_file_absent_is_none_silently_and_one_of_ours_is_parsed(tmp_path: Path) -> None:
    said: list[str] = []
    assert read_kept(tmp_path / "absent.json", 1000, _version_one, said.append) is None
    (tmp_path / "kept.json").write_text('{"version": 1, "x": [1]}', encoding="utf-8")
    assert read_kept(tmp_path / "kept.json", 1000, _version_one, said.append) == {
        "version": 1, "x": [1]}
    assert said == []


@pytest.mark.parametrize(("uid", "mode", "why"), [
    ("me", 0o600, None), ("me", 0o644, None), ("root", 0o644, None),
    ("me", 0o664, "writable by its group"), ("me", 0o646, "writable by others"),
    ("me", 0o666, "writable by others"), ("root", 0o620, "writable by its group"),
    (65534, 0o600, "owned by uid 65534"), (65534, 0o666, "owned by uid 65534"),
])
def test_a_file_someone_else_may_have_written_is_not_private(uid: object, mode: int,
                                                             why: str | None) -> None:
    from hermes_core.atomic_write import not_private

    owner = os.geteuid() if uid == "me" else 0 if uid == "root" else uid
    assert os.geteuid() != 65534   # the row "another user's" means another uid than the suite's
    st = os.stat_result((stat.S_IFREG | mode, 0, 0, 1, owner, 0, 10, 0, 0, 0))
    assert not_private(st) == why


def test_a_child_forked_while_a_thread_was_saying_a_refusal_says_its_own(
        tmp_path: Path, in_forked_child: Any, held_by_a_thread: Any,
        caplog: pytest.LogCaptureFixture) -> None:
    from hermes_core import atomic_write

    def child() -> object:
        with caplog.at_level(logging.WARNING):
            atomic_write.refused("forked cache", tmp_path / "f", OSError(13, "denied"))
        return [r.levelname for r in caplog.records if "forked cache" in r.getMessage()]

    with held_by_a_thread(atomic_write._warned_lock):
        assert in_forked_child(child) == ["WARNING"]
