"""Keys under the pool's prefix that hold another kind of value than this version writes there.

Why: the pool's scripts fail with ``WRONGTYPE`` on a key another program, or another hermes-core
version with another layout, keeps under the same prefix. That is not this worker's to repair (the
data is someone else's), so the pool serves from its local fallback as in an outage, and names
the keys so that the person can give the pool a prefix of its own or delete them. The reconnect
probe asks again here: Redis answering PING is not enough to rejoin while such a key is there.
Split from :mod:`hermes_core.agent.pool.redis` (which uses it); the layout is
:mod:`hermes_core.agent.pool.redis_lua`'s.
"""

from __future__ import annotations

import re
from typing import Any

#: The kind of value each name of the layout holds; a name not listed is none of the pool's
#: (the scripts never touch it), whatever it holds.
LAYOUT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r":\{[^}]*\}:(?:p|rr|k:[^:]+)$"), "hash"),
    (re.compile(r":\{[^}]*\}:(?:w|l|h):[^:]+$"), "zset"),
    (re.compile(r":(?:\{[^}]*\}:e|\{workers\}:slot:\d+|probe:[0-9a-f]+)$"), "string"),
)
MAX_SCANNED = 5000     # keys looked at per check: the pool's own are a few per credential
MAX_NAMED = 3          # keys a warning names

_GLOB = re.compile(r"([*?\[\]\\])")


def expected_type(key: str, prefix: str) -> str | None:
    """The kind of value the pool keeps at ``key``; None when the name is not the pool's."""
    if not key.startswith(prefix + ":"):
        return None
    rest = key[len(prefix):]
    for pattern, kind in LAYOUT:
        if pattern.fullmatch(rest):
            return kind
    return None


def misplaced_keys(client: Any, prefix: str) -> list[str]:
    """"<key> holds a <type> (this version keeps a <kind> there)" for each key of the pool's
    layout under ``prefix`` holding another kind of value, at most :data:`MAX_NAMED`. Raises the
    client's errors (the caller treats them as Redis being away)."""
    names: list[tuple[str, str]] = []
    for n, key in enumerate(client.scan_iter(match=_GLOB.sub(r"\\\1", prefix) + ":*", count=500)):
        if n >= MAX_SCANNED:
            break
        name = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)
        kind = expected_type(name, prefix)
        if kind is not None:
            names.append((name, kind))
    if not names:
        return []
    pipe = client.pipeline(transaction=False)
    for name, _ in names:
        pipe.type(name)
    out: list[str] = []
    for (name, kind), found in zip(names, pipe.execute(), strict=True):
        found = found.decode() if isinstance(found, bytes) else str(found)
        if found not in (kind, "none") and len(out) < MAX_NAMED:
            out.append(f"{name} holds a {found} (this version keeps a {kind} there)")
    return out


def describe(found: list[str]) -> str:
    """The warning's words for :func:`misplaced_keys`' answer."""
    keys = "; ".join(found) if found else "a key of the layout holds another kind of value"
    return (f"holds data of another kind under the pool's key prefix ({keys}): another program "
            "or hermes-core version uses that prefix; give this pool its own "
            "credential_pool.redis_key_prefix, or delete those keys")
