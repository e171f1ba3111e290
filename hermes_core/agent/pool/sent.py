"""The lists of requests a worker keeps to hand back to Redis (:data:`.lua_recovery.Sent`): an
entry found by its name and moved to the request's end, and one entry a request.

Why apart from the backend (:mod:`.redis`, which keeps the lists: the requests sent through Redis
lately, those before an outage, the fallback's, those an outage's recovery merged back): the
rules are plain list work, the same for every list, and testable without a server.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, MutableSequence, Sequence

from hermes_core.agent.pool.lua_recovery import Sent


def take(lists: Iterable[MutableSequence[Sent]], name: str) -> tuple[MutableSequence[Sent], Sent] | None:
    """The entry ``name`` names (none for ``''``), taken out of the first of ``lists`` that
    holds it, with that list; None."""
    if name:
        for entries in lists:
            for i, entry in enumerate(entries):
                if entry[3] == name:
                    del entries[i]
                    return entries, entry
    return None


def ended(entry: Sent, now: float, refused: bool) -> Sent:
    """``entry``'s request ended at ``now``: its entry there, ``r:``-marked if the server refused
    it, as RELEASE moves and marks its window entry (the server counted it until then)."""
    _, tokens, window_s, name = entry
    return (now, tokens, window_s, f"r:{name}" if refused and name else name)


def latest(entries: Iterable[Sent], now: float) -> list[Sent]:
    """One entry a request, oldest first: the latest of those with its name (``r:`` or not: an
    ended one at its end rather than at its send), none out of its window at ``now``."""
    by_name: dict[str, Sent] = {}
    for entry in entries:
        name = entry[3].removeprefix("r:") or repr(entry)
        if entry[0] > now - entry[2] and (name not in by_name or entry[0] >= by_name[name][0]):
            by_name[name] = entry
    return sorted(by_name.values())


def besides(entries: Iterable[Sent], handed: Sequence[Sent]) -> list[Sent]:
    """``entries`` less those ``handed`` over (each once: two requests can share an entry's
    fields): what a merge-back did not take, in order."""
    left = Counter(handed)
    rest = []
    for entry in entries:
        if left[entry] > 0:
            left[entry] -= 1
        else:
            rest.append(entry)
    return rest
