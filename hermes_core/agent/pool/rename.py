"""State a Redis pool kept under a former state name, read once into the current one.

Why: the providers that list one key keep its state under one name
(:func:`hermes_core.agent.credential_pool.state_names`). A name that changes with the config (a
group formed when a provider gets its first alias, dissolved when it loses its last, or named as
decision 227 named groups, by their members) left the key's window, cooldown, removal, breaker
and leases under the old name, and the restarted fleet started the key afresh: twice its limit
in that minute, a removed key tried again. :func:`carry_over` copies each key's state (not its
leases: their requests end where their processes release them) from the first former name
holding it, where the current name holds none yet (another process may have carried it over
already, or started it afresh: it is not overwritten), and adds every former name's window of
the key to the current one's: an edit undone within the state's TTL finds the name's state from
before it, and the requests sent under the edit's name still count.

The keys of two names are in two hash slots (the name is their hash tag), so no script can move
them at once: a state hash is copied by ``DUMP`` and ``RESTORE`` with its remaining TTL,
``RESTORE`` refusing a key that exists (BUSYKEY), so two processes carrying over at once copy it
once; a window's requests are added by their members (lease ids), so twice added is once.

The former names a config can tell (:func:`hermes_core.agent.credential_pool.former_names`) do
not include a group's name once the key that named it leaves the config (a key rotated out, a
group split): no listed key names it any more. So each key also keeps the names its state was
kept under (``{homes}:h:<fingerprint>``, a sorted set by when a process of each name started,
the state's TTL), read first: what a process of another config is counting under (one with the
alias, one without) is read too at the next start.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("hermes_core.agent.pool.redis")

#: a state name's per-key names (state hash, window, leases) and its provider-wide ones
KeyNames = Callable[[str, str], list[str]]
ProviderName = Callable[[str, str], str]


def _copy(client: Any, src: str, dst: str) -> bool:
    """``src`` copied to ``dst`` with its TTL, unless ``dst`` exists or ``src`` does not. The TTL
    is read first: ``src`` expiring after it, ``DUMP`` finds nothing; read second, it was -2 (gone)
    and ``RESTORE`` with 0 kept the copy for good."""
    ttl = int(client.pttl(src))
    if ttl == -2:
        return False
    blob = client.dump(src)
    if blob is None:
        return False
    try:
        client.restore(dst, max(0, ttl), blob)
    except Exception as exc:   # redis-py's ResponseError; the extra is imported by the caller
        if "BUSYKEY" in str(exc):
            return False
        raise
    return True


def _add_window(client: Any, src: str, dst: str) -> bool:
    """The requests of window ``src`` added to window ``dst`` (each by its member, a request's
    lease id: read twice, or already copied, it counts once), ``dst`` living as long as either."""
    sent = client.zrange(src, 0, -1, withscores=True)
    if not sent:
        return False
    ttl = max(int(client.pttl(src)), int(client.pttl(dst)))
    client.zadd(dst, dict(sent))
    if ttl > 0:   # else ``src`` had none (no script writes a window so): nor has the sum
        client.pexpire(dst, ttl)
    return True


#: the names a key's state was kept under, kept at most (the most recent)
HOMES = 8


def _homes(client: Any, fp: str, name: str, now: float, provider_name: ProviderName,
           state_ttl_s: float) -> list[str]:
    """The names other than ``name`` the state of key ``fp`` was kept under, most recent
    first; ``name`` is recorded as its latest (at ``now``, Redis's clock). Two round trips."""
    homes = provider_name("homes", f"h:{fp}")
    seen = [n.decode() if isinstance(n, bytes) else str(n)   # a client given may not decode
            for n in client.zrevrange(homes, 0, HOMES - 1)]
    pipe = client.pipeline(transaction=False)
    pipe.zadd(homes, {name: now})
    pipe.zremrangebyrank(homes, 0, -HOMES - 1)
    if math.isfinite(state_ttl_s) and state_ttl_s > 0:
        pipe.pexpire(homes, max(1, int(state_ttl_s * 1000)))
    pipe.execute()
    return [n for n in seen if n != name]


def carry_over(client: Any, name: str, former: Sequence[str], fingerprints: Sequence[str],
               key_names: KeyNames, provider_name: ProviderName,
               state_ttl_s: float = 7 * 86400.0) -> list[str]:
    """Each key's state (and the provider breaker) from the first former name holding it into
    ``name``, where ``name`` holds none of it, and each former name's window of the key added to
    ``name``'s; returns the former names read. The former names of a key: those its state was
    kept under (:func:`_homes`), then ``former``. Redis errors reach the caller (the backend's
    fallback)."""
    read: list[str] = []
    secs, micros = client.time() if fingerprints else (0, 0)
    for fp in fingerprints:
        state, window = key_names(name, fp)[:2]
        homes = _homes(client, fp, name, int(secs) + int(micros) / 1e6, provider_name,
                       state_ttl_s)
        names = list(dict.fromkeys([*homes, *former]))
        # the window: the requests sent with the key under any name count, whatever ``name``
        # holds already (an edit undone within the state's TTL finds its state from before)
        for old in names:
            if old != name and _add_window(client, key_names(old, fp)[1], window) \
                    and old not in read:
                read.append(old)
        if client.exists(state):
            continue
        for old in names:
            if old == name or not client.exists(key_names(old, fp)[0]):
                continue
            # the state hash; not the leases: their requests end under the old name (their
            # processes release there), and a copy held the key's slot under the new one until
            # it expired
            _copy(client, key_names(old, fp)[0], state)
            if old not in read:
                read.append(old)
            break
    for old in read[:1]:   # the breaker of the group whose keys came first
        _copy(client, provider_name(old, "p"), provider_name(name, "p"))
    if read:
        log.info("credential pool: the state of %s carried over from %s", name, ", ".join(read))
    return read
