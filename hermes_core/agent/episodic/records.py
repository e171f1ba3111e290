"""A stored session's record and the normalising its text fields go through before a write.

Kept apart from :mod:`.store` (the SQLite shell) because the summariser and the context engine
make records and tags without touching the database; the store re-exports these names, its
callers' vocabulary."""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal

MAX_TAGS = 16
MAX_TAG_CHARS = 64

UpsertStatus = Literal["inserted", "replaced", "unchanged", "duplicate"]


def scrub_surrogates(text: str) -> str:
    """Valid UTF-8 text: surrogate pairs joined, lone surrogates replaced by U+FFFD.

    A terminal paste decoded with ``surrogateescape`` (or a broken clipboard) leaves lone
    surrogates in a message; SQLite and the content hash need UTF-8, and ``str.encode`` raises on
    them, which would lose the whole session at its end."""
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def normalise_text(text: str) -> str:
    """NFC and collapsed whitespace: what the content hash is computed over."""
    return " ".join(unicodedata.normalize("NFC", scrub_surrogates(text)).split())


def scrub_record(rec: SessionRecord) -> SessionRecord:
    """The record with every text field valid UTF-8 (see :func:`scrub_surrogates`)."""
    sid, summary = scrub_surrogates(rec.session_id), scrub_surrogates(rec.summary)
    tags = tuple(scrub_surrogates(t) for t in rec.tags)
    if (sid, summary, tags) == (rec.session_id, rec.summary, rec.tags):
        return rec
    return replace(rec, session_id=sid, summary=summary, tags=tags)


def normalise_tags(tags: Iterable[str] | str) -> tuple[str, ...]:
    """Comma-split (ASCII or Chinese commas), stripped, de-duplicated, bounded tags."""
    if isinstance(tags, str):
        raw = tags.replace("，", ",").replace("、", ",").split(",")
    else:
        raw = [p for t in tags for p in str(t).replace("，", ",").replace("、", ",").split(",")]
    out: dict[str, None] = {}
    for t in raw:
        t = normalise_text(t)[:MAX_TAG_CHARS].strip()
        if t and t.lower() not in {k.lower() for k in out}:
            out[t] = None
        if len(out) >= MAX_TAGS:
            break
    return tuple(out)


def number_of(cell: object, unreadable: float) -> float:
    """A stamp or prior cell as a number; ``unreadable`` for text or a blob another tool wrote."""
    try:
        return float(cell)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return unreadable


def count_of(cell: object) -> int:
    """A message count cell as a count; 0 for what another tool wrote that is none."""
    number = number_of(cell, 0.0)
    return int(number) if math.isfinite(number) and number >= 0 else 0


def stamp_of(cell: object) -> float | None:
    """A stored date as epoch seconds: a number, or text another tool wrote there, a number or an
    ISO 8601 date as ``hermes-core memory`` prints them (naive = UTC); None for anything else.

    Why: a session row edited outside hermes-core keeps a text date, and a read of it must not
    fail on what our own output would have put there."""
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        when: float | None = float(cell)
    elif isinstance(cell, str):
        raw = cell.strip()
        try:
            when = float(raw)
        except ValueError:
            try:
                dt = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
                when = (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
            except (ValueError, OverflowError):
                when = None
    else:
        when = None
    return when if when is not None and math.isfinite(when) else None


def memory_id_for(session_id: str) -> str:
    """Deterministic id of a session's memory: the same on every machine and restart."""
    return hashlib.sha256(("session\x00" + scrub_surrogates(session_id)).encode("utf-8")).hexdigest()[:16]


def content_hash_of(summary: str) -> str:
    """Hash of the normalised summary: two sessions with identical summaries share it."""
    return hashlib.sha256(normalise_text(summary).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One stored session summary."""

    session_id: str
    summary: str
    tags: tuple[str, ...]
    created_at: float
    relevance_score: float = 1.0
    source: str = "manual"
    message_count: int = 0

    @property
    def memory_id(self) -> str:
        return memory_id_for(self.session_id)

    @property
    def content_hash(self) -> str:
        return content_hash_of(self.summary)


@dataclass(frozen=True, slots=True)
class UpsertResult:
    """What a write did: ``duplicate_of`` names the session already holding an identical summary."""

    status: UpsertStatus
    session_id: str
    memory_id: str
    content_hash: str
    duplicate_of: str | None = None
