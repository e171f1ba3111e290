"""A cache folder's files unused for long, and of no catalog this process serves, are removed;
nothing else is."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from hermes_core.retrieval.cache_sweep import DAY_SECONDS, CacheFile, named, npz_holding, stale, sweep, touch

NOW = 1_000_000_000.0
OWNED = named(r"[0-9a-f]{16}\.npz")
A, B, C = "a" * 16 + ".npz", "b" * 16 + ".npz", "c" * 16 + ".npz"


def _any_file(path: Path) -> bool:
    """``made`` where the contents are not the point: every file the name owns."""
    return True


def _file(folder: Path, name: str, used: float) -> Path:
    path = folder / name
    path.write_bytes(b"x")
    os.utime(path, (used, used))
    return path


@pytest.mark.parametrize(("name", "idle_days", "kept_by_process", "removed"), [
    (A, 31, False, True),            # unused past the limit, nobody's: removed
    (A, 29, False, False),           # used within the limit (another process's): kept
    (A, 31, True, False),            # this process's own catalog: kept however old
    ("notes.txt", 365, False, False),                # not of the cache's naming: never touched
    ("A" * 16 + ".npz", 365, False, False),
    (f".{A}.k2j_9x.tmp", 31, False, True),            # a crashed writer's leftover
    (f".{A}.k2j_9x.tmp", 1, False, False),            # a writer at work
])
def test_a_file_is_stale_only_when_the_caches_own_unused_past_the_limit_and_not_this_processs(
        name: str, idle_days: float, kept_by_process: bool, removed: bool) -> None:
    files = [CacheFile(name, NOW - idle_days * DAY_SECONDS)]
    assert stale(files, {name} if kept_by_process else set(), OWNED, NOW, 30) == ([name] if removed else [])


def test_a_sweep_removes_only_the_stale_files_and_leaves_links_and_folders(tmp_path: Path) -> None:
    old = NOW - 40 * DAY_SECONDS
    _file(tmp_path, A, old)
    _file(tmp_path, B, NOW - DAY_SECONDS)
    _file(tmp_path, "notes.txt", old)
    (tmp_path / C).mkdir()
    target = _file(tmp_path.parent, "elsewhere.npz", old)
    (tmp_path / ("d" * 16 + ".npz")).symlink_to(target)
    assert sweep(tmp_path, set(), OWNED, NOW, 30, made=_any_file) == [A]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([B, C, "d" * 16 + ".npz", "notes.txt"])
    assert target.exists()


def test_a_file_marked_as_used_is_not_swept(tmp_path: Path) -> None:
    path = _file(tmp_path, A, NOW - 40 * DAY_SECONDS)
    touch(path, NOW)
    assert sweep(tmp_path, set(), OWNED, NOW, 30, made=_any_file) == [] and path.exists()


def test_no_folder_and_no_file_are_no_error(tmp_path: Path) -> None:
    assert sweep(tmp_path / "absent", set(), OWNED, NOW, made=_any_file) == []
    touch(tmp_path / "absent.npz", NOW)
    assert not (tmp_path / "absent.npz").exists()


def _npz(folder: Path, name: str, used: float, **arrays: np.ndarray) -> Path:
    path = folder / name
    with path.open("wb") as f:
        np.savez(f, **arrays)
    os.utime(path, (used, used))
    return path


def test_a_file_of_the_caches_naming_its_writer_did_not_make_is_kept(tmp_path: Path) -> None:
    # the cache folder is the user's own: their arrays named by a hash, their notes, a torn file
    old = NOW - 40 * DAY_SECONDS
    theirs = _npz(tmp_path, A, old, weights=np.arange(3))
    ours = _npz(tmp_path, B, old, header=np.arange(2), digest=np.asarray("d"), other=np.arange(1))
    torn = _file(tmp_path, C, old)
    leftover = _file(tmp_path, f".{C}.k2j_9x.tmp", old)   # unfinished: no zip directory to read
    assert sweep(tmp_path, set(), OWNED, NOW, 30, made=npz_holding("header", "digest")) == sorted(
        [B, leftover.name])
    assert theirs.exists() and torn.exists() and not ours.exists() and not leftover.exists()


def test_what_a_file_holds_is_read_from_the_file_itself_never_through_a_link_or_from_a_fifo(
        tmp_path: Path) -> None:
    # the name was listed as a regular file; by the time its contents are checked it may be a
    # link to a file elsewhere (whose contents would vouch for it) or a FIFO (a read would hang)
    made = npz_holding("header", "digest")
    target = _npz(tmp_path, "elsewhere.npz", NOW, header=np.arange(2), digest=np.asarray("d"))
    assert made(target)
    (tmp_path / A).symlink_to(target)
    os.mkfifo(tmp_path / B)
    assert not made(tmp_path / A) and not made(tmp_path / B)


def test_a_file_another_user_owns_in_a_shared_folder_is_marked_with_the_current_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """POSIX lets only a file's owner set an explicit time; another user who may write it may
    still set the current one. A process of a second user sharing the cache folder could not mark
    the file it reads, so a third process's sweep took it as idle."""
    path = tmp_path / "shared.npz"
    path.write_bytes(b"x")
    os.utime(path, (0, 0))
    real_utime = os.utime

    def owner_only_times(p: object, times: object = None, **kw: object) -> None:
        if times is not None:
            raise PermissionError(1, "Operation not permitted")
        real_utime(p, None, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "utime", owner_only_times)
    touch(path, now=10 * DAY_SECONDS)
    assert path.stat().st_mtime > DAY_SECONDS
