"""The history's folds, kept in the home so another process on the same chat sends the same prefix.

Why: a compaction's summary lived only in the :class:`~.compaction.HistoryCompactor` that made
it. A new process (a restart, a web server that makes an Agent per request and loads the chat
from its database) found the whole history over its budget and folded it again from nothing:
one more summary request, a summary that is not the one the provider cached, and everything
after the system prompt written to the cache again (a model's summary is not reproducible,
and even the extractive one differs when made in one step instead of several). With the folds
kept, the new process finds the fold the old one made for the same messages and goes on from it:
its first request is byte-identical to what the old process would have sent.

What is stored (``HOME/cache/compaction/<key>.json``): a fold's state (the summary's prose, the
facts, how many messages and turns it covers), scrubbed of configured secrets and key-shaped
strings as every stored text is (what leaves for a provider is scrubbed the same way, so the
wire is the same); its key is a SHA-256 chained over the folded messages (role, text, tool
calls, tool-call id, name), so it is found only for the very messages it summarises. It is a
cache: a file that is unreadable, damaged or of another shape is ignored (the chat is folded
again, as before); a disk that refuses the write costs only the next process's fold. The folder
keeps the newest :data:`MAX_FOLDS` files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.atomic_write import read_kept, write_cache
from hermes_core.types import Message

log = logging.getLogger("hermes_core.compaction")

#: Folds kept in a home; the oldest files go first (a chat needs only its latest).
MAX_FOLDS = 256
#: A fold file is a summary: never near this.
MAX_FOLD_BYTES = 1_000_000
FORMAT = 1


def _message_bytes(m: Message) -> bytes:
    calls = [[c.id, c.name, c.arguments] for c in m.tool_calls]
    return json.dumps([m.role, m.content, calls, m.tool_call_id, m.name],
                      ensure_ascii=False).encode("utf-8")


class PrefixKeys:
    """The keys of a growing history's prefixes, each message hashed once: a compactor that finds
    its history over budget with nothing it can fold looks for another process's fold on every
    turn, and hashing the whole history again each time cost a chat of long pastes ~its length
    in hashing per turn. ``extend`` hashes only the messages added since the last call."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256(b"hermes-fold\x1e")
        self._seen = 0
        self._last: Message | None = None

    def extend(self, history: Sequence[Message]) -> dict[int, str] | None:
        """``{k: key of history[:k]}`` for each turn start ``k > 0`` not seen before; None when
        ``history`` does not go on from the messages seen (another conversation: told, as the
        compactor tells it, by the last message seen, compared by equality, not hashed again)."""
        if self._seen > len(history) or (self._seen and history[self._seen - 1] != self._last):
            return None
        keys: dict[int, str] = {}
        for k in range(self._seen, len(history)):
            m = history[k]
            if k and m.role == "user":
                keys[k] = self._hash.hexdigest()[:40]
            self._hash.update(_message_bytes(m) + b"\x1e")
        self._seen = len(history)
        self._last = history[-1] if history else None
        return keys

    def end(self) -> dict[int, str]:
        """``{n: key of all n messages seen}`` ({} before any): a fold may end there, when the
        turn after it (the new message's) made one of the whole history."""
        return {self._seen: self._hash.hexdigest()[:40]} if self._seen else {}


def prefix_keys(history: Sequence[Message]) -> dict[int, str]:
    """``{k: key of history[:k]}`` for each turn start ``k > 0`` and the end (where a fold may
    end: the new message starts a turn after it)."""
    walk = PrefixKeys()
    keys = walk.extend(history)
    assert keys is not None   # a new one goes on from nothing
    return {**keys, **walk.end()}


class FoldStore:
    """Fold states by the messages they summarise (see the module doc). ``read_only``: folds are
    found, never kept (``hermes-core prompt`` shows the agent's fold and writes nothing)."""

    def __init__(self, folder: Path, scrub: Callable[[str], str], *,
                 read_only: bool = False) -> None:
        self.folder = Path(folder)
        self._scrub = scrub
        self.read_only = read_only

    def save(self, history: Sequence[Message], state: dict[str, object]) -> bool:
        """Keep ``state``, the fold of ``history[:state["folded"]]``; False when not written."""
        folded = state.get("folded")
        if self.read_only or not isinstance(folded, int) or not 0 < folded <= len(history):
            return False
        key = _key_of_whole(history[:folded])
        facts = state.get("facts", ())
        data = {**state, "prose": self._scrub(str(state.get("prose", ""))),
                "facts": [self._scrub(str(f)) for f in facts] if isinstance(facts, (list, tuple))
                else [], "format": FORMAT, "key": key}
        written = write_cache(self.folder / f"{key}.json",
                              json.dumps(data, ensure_ascii=False).encode("utf-8"),
                              "compaction cache", logger=log, durable=False, folders=2)
        if written:
            self._prune()
        return written

    def find(self, history: Sequence[Message]) -> dict[str, Any] | None:
        """The latest stored fold of a prefix of ``history`` (its longest), or None. Its fields
        are checked (ints, strs, a list of strs): a caller takes them as they are."""
        return self.find_keys(prefix_keys(history), listed=True)

    def find_keys(self, keys: Mapping[int, str], *, listed: bool) -> dict[str, Any] | None:
        """The stored fold of the longest prefix among ``keys`` (:class:`PrefixKeys`), or None.
        ``listed``: the folder is listed once and only the files there are read (a first search,
        over every prefix of a history); else each key's file is tried (a turn's new prefixes)."""
        names: set[str] | None = None
        if listed:
            try:
                names = set(os.listdir(self.folder))
            except OSError:
                return None
        for k in sorted(keys, reverse=True):
            name = f"{keys[k]}.json"
            if names is not None and name not in names:
                continue
            state = self._read(self.folder / name, keys[k], k)
            if state is not None:
                return state
        return None

    def _read(self, path: Path, key: str, folded: int) -> dict[str, Any] | None:
        data = read_kept(path, MAX_FOLD_BYTES, lambda d: d,
                         lambda reason: log.debug("fold store: %s ignored (%s)", path, reason))
        if data is None:   # absent (a new turn's prefix tried unlisted), or not JSON of ours
            return None
        # counts are ints, not a float or a bool that equals one (8.0 == 8, True == 1): the
        # compactor indexes the history with them
        ok = (isinstance(data, dict) and data.get("key") == key
              and all(type(data.get(n)) is int for n in ("format", "folded", "turns", "compactions"))
              and data["format"] == FORMAT
              and data["folded"] == folded
              and isinstance(data.get("prose"), str) and isinstance(data.get("source"), str)
              and isinstance(data.get("facts"), list)
              and all(isinstance(f, str) for f in data["facts"]))
        if not ok:
            log.debug("fold store: %s is not a fold of this format; ignored", path)
            return None
        return dict(data)

    def _prune(self) -> None:
        try:
            entries = [e for e in os.scandir(self.folder) if e.name.endswith(".json")]
            if len(entries) <= MAX_FOLDS:
                return
            entries.sort(key=lambda e: e.stat().st_mtime_ns)
            for e in entries[:len(entries) - MAX_FOLDS]:
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
        except OSError as e:
            log.debug("fold store %s: prune failed (%s)", self.folder, e)


def _key_of_whole(history: Sequence[Message]) -> str:
    """The key of all of ``history`` (a fold ending at its end)."""
    return prefix_keys(history)[len(history)]
