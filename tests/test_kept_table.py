"""Tests of ``hermes_core/kept_table.py``: a home's shared JSON table changed under its lock."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

from hermes_core import kept_table
from hermes_core.kept_table import lock_path, lock_wait, update
from tests.conftest import LockTries


def _parse(data: Any) -> dict[str, int]:
    if not isinstance(data, dict):
        raise ValueError("not a table")
    return data


def _adding(key: str) -> Callable[[dict[str, int] | None], dict[str, int]]:
    return lambda kept: {**(kept or {}), key: 1}


def _dump(table: dict[str, int]) -> bytes:
    return json.dumps(table).encode("utf-8")


def _update(path: Path, key: str, **options: Any) -> dict[str, int] | None:
    return update(path, 1000, _parse, _adding(key), _dump, "test table",
                  logger=logging.getLogger("test"), **options)


def released_after_the_first_refusal(path: Path, lock_tries: LockTries) -> list[str]:
    """Hold ``path``'s lock as another holder would, and free it the moment a writer's first try
    is refused: a writer that waits takes it on its next try, one that does not has given up."""
    holder = FileLock(lock_path(path))
    holder.acquire()
    lock_tries.tries.clear()
    lock_tries.on_refused = lambda: holder.is_locked and holder.release()
    return lock_tries.tries


def test_a_writer_off_the_event_loop_waits_for_the_lock(tmp_path: Path,
                                                        lock_tries: LockTries) -> None:
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    tries = released_after_the_first_refusal(path, lock_tries)
    assert _update(path, "a") == {"a": 1}
    assert tries[:2] == ["refused", "taken"]


def test_a_writer_on_an_event_loop_tries_the_lock_once_and_never_waits(
        tmp_path: Path, lock_tries: LockTries) -> None:
    """An async turn records its reply on the event loop: a lock held by another process held
    every task of the loop for up to 0.5 s. One try there; the caller writes later."""
    path = tmp_path / "cache" / "t.json"
    path.parent.mkdir()
    tries = released_after_the_first_refusal(path, lock_tries)

    async def turn() -> dict[str, int] | None:
        return _update(path, "a")

    assert asyncio.run(turn()) is None
    assert tries == ["refused"] and not path.exists()
    assert asyncio.run(turn()) == {"a": 1}   # free now: the next try writes


def test_lock_wait_is_none_on_an_event_loop_and_the_given_wait_elsewhere() -> None:
    assert lock_wait(True) == 0.0
    assert lock_wait(False) == kept_table.LOCK_WAIT and lock_wait(False, 2.0) == 2.0
