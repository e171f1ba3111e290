"""The threads that prepare async turns, shared by every Agent of the process.

``Agent.achat`` builds its prompt (context files, skill retrieval, episodic search, the
``pre_llm_call`` hook) off the event loop: tens of milliseconds a loop serving other requests must
not stall for. ``asyncio.to_thread`` would hand that work to the loop's default executor, which
grows to ``cpu_count + 4`` threads under load; those threads then fight the event loop for the GIL,
and at 64 concurrent turns the handoffs cost more CPU than the prompt building itself (3.4-5.1 vs
2.6-3.1 ms of client CPU per request in benchmarks/async_throughput.py on 2 cores). A few
dedicated threads keep the loop free at a fraction of that: model inference and SQLite release the
GIL, so up to four still overlap on a bigger machine.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

PREPARE_THREADS = max(1, min(4, os.cpu_count() or 1))

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(PREPARE_THREADS, thread_name_prefix="hermes-prepare")
    return _pool


async def run_off_loop(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on a prepare thread, with the caller's context variables (as ``to_thread``)."""
    ctx = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(
        _executor(), functools.partial(ctx.run, fn, *args))
