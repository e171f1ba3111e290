"""The Redis leases this process holds open, per key, and those it must end in Redis once it
answers again.

Why apart from the backend (:mod:`.redis`, which uses it): a release names the lease it ends,
and the backend must know which of its leases are still open to tell a release of its own
Redis lease (ended there) from one of a request the local fallback handed out (ended locally),
and to end nothing twice: a lease already released is not open, so a second release of it ends
no other request's lease in its place. A release naming no lease ends the key's oldest. A lease
is forgotten at its expiry (on an injectable monotonic clock), so calls never released leak
nothing; Redis expires it on its own.

While Redis is unreachable a lease can be left in it two ways: a request taken there ends (a
Redis that kept running still counts it in flight until it expires, minutes), or an acquire's
reply never came (it may have run there, holding the key). :meth:`HeldLeases.settle` ends both
in Redis when it answers again, so no worker finds the key at its in-flight cap after an outage.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from hermes_core.forked import renew_in_child

#: (provider, fingerprint): the pool's name for one key
Item = tuple[str, str]
#: a key's Redis names (state hash, window, leases), as the backend names them
KeyNames = Callable[[str, str], list[str]]


class HeldLeases:
    """This process's open leases per key, oldest first: (lease id, monotonic expiry, tokens)."""

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self.renew_after_fork()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """Empty, with a lock of its own; again in a forked child (:mod:`hermes_core.forked`): the parent's
        leases are the parent's to release and to end in Redis (the child's copy let a release
        naming no lease end the parent's oldest there)."""
        self._lock = threading.Lock()
        self._held: dict[Item, list[tuple[str, float, int]]] = {}
        # leases of requests that ended while Redis was unreachable (provider, key, lease id)
        self._ended: list[tuple[str, str, str]] = []
        # acquires whose reply never came (provider, the keys asked, lease id, tokens)
        self._unanswered: list[tuple[str, tuple[str, ...], str, int]] = []

    def hold(self, item: Item, lease: str, ttl_s: float, tokens: int) -> None:
        """Remember an open lease for ``ttl_s``; the key's leases already expired are dropped."""
        now = self._monotonic()
        with self._lock:
            held = self._held.setdefault(item, [])
            while held and held[0][1] <= now:
                held.pop(0)
            held.append((lease, now + ttl_s, tokens))

    def take(self, item: Item, lease: str) -> tuple[str, int] | None:
        """Forget an open lease: the one named, or without a name the key's oldest; (id, tokens),
        or None when the named one is not open (released already: another request's lease must
        not be ended in its place)."""
        with self._lock:
            held = self._held.get(item)
            if not held:
                return None
            for i, (lid, _, tok) in enumerate(held):
                if lid == lease:
                    held.pop(i)
                    return lid, tok
            if lease:
                return None
            lid, _, tok = held.pop(0)
            return lid, tok

    def open_on(self, provider: str) -> dict[str, list[tuple[str, float]]]:
        """The leases still open on ``provider``'s keys: per key, (lease id, seconds left), to
        hand back to a Redis that lost them (:data:`.lua_recovery.HOLD`)."""
        now = self._monotonic()
        with self._lock:
            return {fp: [(lid, until - now) for lid, until, _ in held if until > now]
                    for (p, fp), held in self._held.items() if p == provider}

    def ended_away(self, item: Item, lease: str) -> None:
        """A request taken from Redis ended while Redis was unreachable: end it there later."""
        with self._lock:
            self._ended.append((*item, lease))

    def unanswered(self, provider: str, fingerprints: Sequence[str], lease: str,
                   tokens: int) -> None:
        """An acquire's reply never came: the hold it may have taken goes when Redis answers."""
        with self._lock:
            self._unanswered.append((provider, tuple(fingerprints), lease, tokens))

    def settle(self, client: Any, key_names: KeyNames) -> None:
        """End in Redis the leases :meth:`ended_away` and :meth:`unanswered` left there (and an
        unanswered acquire's request in the window). Redis errors reach the caller; what was not
        ended is kept for the next time."""
        with self._lock:
            ended, unanswered = list(self._ended), list(self._unanswered)
        for provider, fp, lease_id in ended:
            client.zrem(key_names(provider, fp)[2], lease_id)
        for provider, fps, lease_id, tokens in unanswered:
            for fp in fps:
                _, window_key, lease_key = key_names(provider, fp)
                client.zrem(lease_key, lease_id)
                client.zrem(window_key, f"{lease_id}:{tokens}")
        with self._lock:
            del self._ended[:len(ended)]
            del self._unanswered[:len(unanswered)]
