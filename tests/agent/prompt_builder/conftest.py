"""What the tests of ``hermes_core/agent/prompt_builder.py`` share: a home holding SOUL, MEMORY
and USER, a project repository, and builders on a fixed clock whose files have settled.

PromptBuilder's tests are split by behaviour: the stable prefix (``test_prefix.py``), what is
read again and when (``test_rereads.py``), the per-turn context (``test_turn_context.py``) and
the cache markers a build plans (``test_cache_markers.py``).
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hermes_core.agent.prompt_builder import PromptBuilder
from hermes_core.types import Message

FIXED = datetime(2031, 7, 4, 12, 30, tzinfo=UTC)


def clock() -> datetime:
    """The builders' wall clock: a fixed instant, so a turn's date line never differs."""
    return FIXED


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def marked_home(hermes_home: Path) -> Path:
    write(hermes_home / "SOUL.md", "I am Hermes-of-the-test, a careful assistant.\n")
    write(hermes_home / "MEMORY.md", "The deploy script lives in ops/deploy.sh\n§\nStaging is eu-west-1\n")
    write(hermes_home / "USER.md", "The user is called Ada and prefers terse answers.\n")
    return hermes_home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    return repo


def a_minute_later() -> int:
    """A file clock under which every file written by the test has settled (its stat trusted)."""
    return time.time_ns() + 60_000_000_000


def builder(marked_home: Path, cwd: Path, **kw) -> PromptBuilder:
    """A builder of ``marked_home`` working in ``cwd``, on the fixed clock, its files settled."""
    kw.setdefault("file_clock", a_minute_later)
    return PromptBuilder(marked_home, cwd=cwd, clock=clock, **kw)


def conversation(n: int) -> list[Message]:
    """``n`` exchanges of history, question then answer."""
    out: list[Message] = []
    for i in range(n):
        out += [Message("user", f"question {i}"), Message("assistant", f"answer {i}")]
    return out


def settle(folder: Path) -> None:
    """Date ``folder``'s last change an hour back: a later change of its entries moves it."""
    hour_ago = datetime.now(UTC).timestamp() - 3600
    os.utime(folder, (hour_ago, hour_ago))


def settled_builder(home: Path, project: Path) -> PromptBuilder:
    """A builder that has seen both folders settled: missing files are no longer looked for."""
    b = builder(home, project)
    b.build("hi")
    settle(home)
    settle(project)
    b.build("hi")
    b.build("hi")
    return b
