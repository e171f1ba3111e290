"""Shared test helpers (importable: tests/ is on sys.path under pytest's rootdir import mode)."""

from __future__ import annotations

import shutil
from pathlib import Path

EXAMPLE_HOME = Path(__file__).parent.parent / "examples" / "home"


def copy_example_home(dst: Path) -> Path:
    """The bundled example home, copied without the state a chat writes into it."""
    shutil.copytree(EXAMPLE_HOME, dst, ignore=shutil.ignore_patterns("sessions.db*", "cache",
                                                                      "audit.jsonl", ".chat_history"))
    return dst
