"""Each model's billed-token ratio kept in the home: found by another process, bounded, a damaged
file costing a warning and not the turn."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from filelock import FileLock

from hermes_core import kept_table
from hermes_core.agent.prompt import calibration_store
from hermes_core.agent.prompt.calibration_store import CalibrationStore
from hermes_core.testing import FakeClock
from tests.conftest import LockTries


@pytest.fixture
def path(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home" / "cache" / "calibration.json"


def test_a_ratio_kept_by_one_process_is_read_by_the_next(path: Path) -> None:
    first = CalibrationStore(path)
    assert first.get("claude-sonnet-4-5") is None
    assert first.put("claude-sonnet-4-5", 1.0731)
    assert first.put("llama-3.3-70b", 0.97)
    later = CalibrationStore(path)
    assert later.get("claude-sonnet-4-5") == 1.0731 and later.get("llama-3.3-70b") == 0.97
    assert later.get("gpt-4o") is None


def test_the_file_is_read_once_for_counting_and_again_only_to_merge_a_write(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    CalibrationStore(path).put("m", 1.2)
    reads, writes = [], []
    real_read, real_write = calibration_store.read_kept, kept_table.write_cache
    for module in (calibration_store, kept_table):   # the store's own read; the merge's
        monkeypatch.setattr(module, "read_kept", lambda *a: reads.append(a) or real_read(*a))
    monkeypatch.setattr(kept_table, "write_cache",
                        lambda *a, **k: writes.append(a) or real_write(*a, **k))
    store = CalibrationStore(path)
    for _ in range(5):
        assert store.get("m") == 1.2
    assert not store.put("m", 1.2)          # the same ratio: nothing to write
    assert store.put("m", 1.25)
    assert len(reads) == 2 and len(writes) == 1   # the second read: the write's merge


def test_the_file_keeps_the_most_recently_billed_models(path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibration_store, "MAX_MODELS", 3)
    store = CalibrationStore(path)
    for n in range(5):
        store.put(f"model-{n}", 1.0 + n / 10)
    store.put("model-2", 1.5)               # billed again: the newest
    store.put("model-5", 1.6)
    kept = json.loads(path.read_text(encoding="utf-8"))["ratios"]
    assert list(kept) == ["model-4", "model-2", "model-5"]


@pytest.mark.parametrize("content", [
    b"\x00{not json", b"[1, 2]", b'{"format": true, "ratios": {}}',
    b'{"format": 1, "ratios": [1.2]}', b"[" * 60_000, b'{"format": 0, "ratios": {}}'])
def test_a_damaged_or_foreign_file_is_ignored_with_a_warning_naming_it(
        path: Path, content: bytes, caplog: pytest.LogCaptureFixture) -> None:
    path.parent.mkdir()
    path.write_bytes(content)
    store = CalibrationStore(path)
    with caplog.at_level(logging.WARNING, logger="hermes_core.compaction"):
        assert store.get("m") is None
        assert store.get("m") is None
    assert [r.getMessage() for r in caplog.records if str(path) in r.getMessage()] != []
    assert len(caplog.records) == 1          # read once: one warning
    assert store.put("m", 1.1) and CalibrationStore(path).get("m") == 1.1   # and mended


def test_a_ratio_out_of_bounds_or_not_a_number_is_not_kept_nor_taken(path: Path) -> None:
    store = CalibrationStore(path)
    for bad in (0.01, 40.0, float("nan"), float("inf")):
        assert not store.put("m", bad)
    assert not store.put("x" * 1000, 1.1)
    path.parent.mkdir()
    path.write_text(json.dumps({"format": 1, "ratios": {
        "a": 1.1, "b": True, "c": "1.2", "d": 99.0, "e": 1}}), encoding="utf-8")
    store = CalibrationStore(path)
    assert [store.get(m) for m in "abcde"] == [1.1, None, None, None, 1.0]


def test_a_read_only_store_reads_but_never_writes(path: Path) -> None:
    CalibrationStore(path).put("m", 1.2)
    before = path.read_bytes()
    preview = CalibrationStore(path, read_only=True)
    assert preview.get("m") == 1.2
    assert not preview.put("m", 1.3) and path.read_bytes() == before
    assert not CalibrationStore(path.parent.parent / "other" / "c.json", read_only=True).put("m", 1.1)


def test_a_disk_that_refuses_costs_only_the_calibration(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file where the folder should be", encoding="utf-8")
    store = CalibrationStore(tmp_path / "cache" / "calibration.json")
    assert store.put("m", 1.2) is False
    assert store.get("m") == 1.2              # this process still counts with it


def test_two_processes_on_one_home_keep_each_other_s_models(path: Path) -> None:
    """Each store wrote the table it had read once: the last writer's table won, and another
    process's models were dropped. A write re-reads the file and merges into it now."""
    first, second = CalibrationStore(path), CalibrationStore(path)
    assert first.get("claude-a") is None and second.get("claude-b") is None   # both have read
    assert first.put("claude-a", 1.1)
    assert second.put("claude-b", 1.2)
    assert first.put("claude-c", 1.3)
    assert json.loads(path.read_text(encoding="utf-8"))["ratios"] == {
        "claude-a": 1.1, "claude-b": 1.2, "claude-c": 1.3}
    assert second.get("claude-a") == 1.1        # learned at its write
    assert second.put("claude-a", 1.4)         # this process's newer bill wins for its model
    assert CalibrationStore(path).get("claude-a") == 1.4
    assert CalibrationStore(path).get("claude-c") == 1.3


def test_a_ratio_that_barely_moved_is_written_at_most_once_per_interval(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file was replaced on nearly every billed turn (each request's ratio differs in the
    third digit). A model new to the file, or a ratio moved by more than the tolerance, is
    written at once; a smaller drift at most once per interval, the newest held in memory."""
    clock = FakeClock()
    writes: list[object] = []
    real_write = kept_table.write_cache
    monkeypatch.setattr(kept_table, "write_cache",
                        lambda *a, **k: writes.append(a) or real_write(*a, **k))
    store = CalibrationStore(path, clock=clock)
    assert store.put("m", 1.20)                                  # new: written
    step = calibration_store.TOLERANCE * 1.20 / 10
    for n in range(1, 10):                                       # drift within the tolerance
        clock.t += calibration_store.WRITE_INTERVAL / 20
        assert not store.put("m", 1.20 + n * step)
        assert store.get("m") == 1.20 + n * step                 # counted with the newest
    assert len(writes) == 1 and CalibrationStore(path).get("m") == 1.20
    clock.t += calibration_store.WRITE_INTERVAL
    assert store.put("m", 1.20 + 10 * step)                      # the interval has passed
    assert CalibrationStore(path).get("m") == 1.20 + 10 * step
    assert store.put("m", 1.40)                                  # moved past the tolerance
    assert store.put("n", 1.05)                                  # another model: new
    assert len(writes) == 4


def test_what_the_file_holds_is_within_the_tolerance_of_the_newest_ratio(path: Path) -> None:
    clock = FakeClock()
    store = CalibrationStore(path, clock=clock)
    ratio = 1.0
    for n in range(200):
        ratio *= 1.004 if n % 3 else 0.999
        store.put("m", ratio)
        clock.t += 1
        kept = CalibrationStore(path).get("m")
        assert kept is not None and abs(kept / ratio - 1) <= calibration_store.TOLERANCE


def test_a_model_name_that_is_no_text_is_not_kept_and_breaks_no_write(path: Path) -> None:
    """A name with a lone surrogate (a ``--model`` argument of bytes that are no UTF-8, read with
    surrogateescape) could not be encoded: ``put`` raised UnicodeEncodeError out of the turn's
    record, and as an unwritten ratio it broke every later write of the store."""
    store = CalibrationStore(path)
    assert store.put("m\udcff", 1.3) is False
    assert store.put("模型", 1.2)
    assert CalibrationStore(path).get("模型") == 1.2


def test_processes_writing_at_once_lose_none_of_each_other_s_models(path: Path) -> None:
    """The merge under the lock, with writers that really overlap: three processes, started
    together, each bill 20 models of their own twenty times over (every put a move past the
    tolerance: a read, a merge and a rename); the file keeps all 60 at their last ratio. Without
    the lock a write read before another's rename put back that one's older ratios."""
    import subprocess
    import sys
    go = path.parent.with_name("go")   # beside the cache folder the first write makes
    code = ("import sys, time; from pathlib import Path\n"
            "from hermes_core.agent.prompt.calibration_store import CalibrationStore\n"
            "store = CalibrationStore(Path(sys.argv[1]))\n"
            "while not Path(sys.argv[3]).exists(): time.sleep(0.01)\n"
            "for n in range(400):\n"
            "    store.put(f'{sys.argv[2]}-{n % 20}', 1.1 if n // 20 % 2 else 1.3)\n")
    writers = [subprocess.Popen([sys.executable, "-c", code, str(path), name, str(go)])
               for name in ("a", "b", "c")]
    go.touch()
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0]
    kept = json.loads(path.read_text(encoding="utf-8"))["ratios"]
    assert kept == {f"{name}-{n}": 1.1 for name in "abc" for n in range(20)}   # each's last


def test_a_put_on_an_event_loop_tries_a_held_lock_once_and_writes_at_its_next_due_put(
        path: Path, lock_tries: LockTries) -> None:
    """An async turn records its bill on the event loop: another process holding the lock held
    every task of the loop while ``put`` waited for it (up to 0.5 s). One try now; the ratio
    stays unwritten, counted with, and goes in at the next write that is due."""
    path.parent.mkdir()
    holder = FileLock(kept_table.lock_path(path))
    holder.acquire()
    lock_tries.tries.clear()   # the holder's own
    store = CalibrationStore(path)

    async def record(model: str, ratio: float) -> bool:
        return store.put(model, ratio)

    assert asyncio.run(record("m", 1.2)) is False
    assert lock_tries.tries == ["refused"] and store.get("m") == 1.2 and not path.exists()
    holder.release()
    assert asyncio.run(record("n", 1.1)) is True   # a new model: due, and m goes in with it
    assert CalibrationStore(path).get("m") == 1.2 and CalibrationStore(path).get("n") == 1.1


def test_a_bill_is_counted_with_as_the_file_holds_it_within_the_tolerance_and_as_billed_past_it(
        path: Path, tmp_path: Path) -> None:
    store = CalibrationStore(path)
    assert store.steady("m", 1.2) == 1.2                    # the file has none
    store.put("m", 1.2)
    assert store.steady("m", 1.2 * 1.019) == 1.2            # a small drift: the file's
    assert store.steady("m", 1.2 * 1.021) == 1.2 * 1.021    # past the tolerance: as billed
    (tmp_path / "cache").write_text("a file where the folder should be", encoding="utf-8")
    refused = CalibrationStore(tmp_path / "cache" / "calibration.json")
    assert not refused.put("m", 1.3) and refused.steady("m", 1.3) == 1.3   # never written


def test_a_file_of_a_newer_format_is_ignored_and_never_written_over(
        path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A newer hermes_core's calibration (format 2) was replaced by format 1 at the next bill:
    the newer one's ratios lost, and two versions on one home overwriting each other."""
    path.parent.mkdir()
    newer = b'{"format": 2, "ratios": {"m": {"ratio": 1.2, "encoding": "o200k_base"}}}'
    path.write_bytes(newer)
    store = CalibrationStore(path)
    with caplog.at_level(logging.WARNING, logger="hermes_core.compaction"):
        assert store.put("m", 1.3) is False
    assert path.read_bytes() == newer and store.get("m") == 1.3
    assert [r.getMessage() for r in caplog.records if "newer" in r.getMessage()] != []


def test_a_full_table_of_the_longest_names_it_keeps_is_read_back_whole(path: Path) -> None:
    """Every name the store keeps (up to MAX_NAME characters, control characters written as
    six-byte escapes) in a table of MAX_MODELS: what it writes its reader takes, so no process
    finds the file "too big", ignores it and replaces it with its own models only."""
    names = [f"{i:02d}" + "\x01" * (calibration_store.MAX_NAME - 2)
             for i in range(calibration_store.MAX_MODELS)]
    store = CalibrationStore(path)
    for name in names:
        store.put(name, 1.1)
    later = CalibrationStore(path)
    assert [later.get(name) for name in names] == [1.1] * len(names)
