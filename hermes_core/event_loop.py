"""Whether the calling thread is running an asyncio event loop right now.

Why a module of its own: code that may block (a lock file's wait, a round trip to a networked
backend, a log's write) must not do so on an event loop's thread, where every other task of the
process would wait with it. The top-level helpers (``kept_table``) and the subsystems (the pool,
the audit log) all ask; it lives below both so neither imports the other for it.
"""

from __future__ import annotations

import asyncio


def on_event_loop() -> bool:
    """True when the calling thread is running an asyncio event loop right now."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
