"""The Redis pool scripts' replies read into the pool's types.

Why apart from the backend (:mod:`.redis`, which uses it): a reply is a flat list of strings
whose layout each script fixes (:mod:`.lua_acquire`, :mod:`.lua_release`, :data:`.redis_lua.
SNAPSHOT`); reading it is pure, and tested so, where the backend is the I/O around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.fallback import count_text
from hermes_core.agent.pool.quarantine import Standing
from hermes_core.agent.pool.state import KeySnapshot, KeySpec, ProviderSnapshot, ReleaseResult


def text(value: Any) -> str:
    """A reply item as text (a client built without ``decode_responses`` answers bytes)."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def breaker(value: Any) -> BreakerState:
    """A breaker as the scripts answer it: ``<mode>|<failures>|<opened at>``."""
    mode, failures, opened = text(value).split("|")
    return BreakerState(mode, int(failures), float(opened))  # type: ignore[arg-type]


def opt_float(value: Any) -> float | None:
    """A number, or None for the empty string (the scripts' nil)."""
    s = text(value)
    return float(s) if s else None


@dataclass(frozen=True, slots=True)
class KeyReport:
    """What an acquire answers about one key besides the choice (on Redis's clock)."""

    blocked_until: float
    removed: bool
    learned_rpm: int | None
    window: str        # "<requests>|<limit>|<time>:<tokens>,..." for :func:`.fallback.share`
    standing: Standing


def key_reports(raw: Sequence[Any], keys: int) -> list[KeyReport]:
    """The per-key part of an acquire's reply (six items a key after the first six); none when
    the script answered without it (a refusal before the keys were read)."""
    if len(raw) < 6 + 6 * keys:
        return []
    out = []
    for i in range(keys):
        at = 6 + 6 * i
        removed = text(raw[at + 1]) == "1"
        lr = text(raw[at + 2])
        out.append(KeyReport(float(text(raw[at])), removed, count_text(lr) if lr else None,
                             text(raw[at + 3]),
                             Standing(int(text(raw[at + 4]) or 0), breaker(raw[at + 5]),
                                      removed)))
    return out


def release_result(raw: Sequence[Any]) -> tuple[ReleaseResult, Standing]:
    """The release script's reply: the result, and the key's standing after it."""
    changed, until, removed, restored, recheck, strikes, brk = raw
    res = ReleaseResult(text(changed) == "1", float(text(until)), text(removed) == "1",
                        opt_float(recheck), text(restored) == "1")
    return res, Standing(int(text(strikes) or 0), breaker(brk), res.removed)


def provider_snapshot(provider: str, keys: Sequence[KeySpec],
                      reply: Sequence[Any]) -> ProviderSnapshot:
    """The snapshot script's reply: now, the provider breaker, then ten items a key."""
    raw = [text(x) for x in reply]
    out = []
    for i, spec in enumerate(keys):
        rm, bu, fl, req, tok, bm, bf, bo, lr, st = raw[4 + 10 * i: 14 + 10 * i]
        out.append(KeySnapshot(spec.fingerprint, rm == "1", float(bu), int(fl), int(req),
                               int(tok), BreakerState(bm, int(bf), float(bo)),  # type: ignore[arg-type]
                               count_text(lr) if lr else None, int(st or 0)))
    return ProviderSnapshot(provider, float(raw[0]),
                            BreakerState(raw[1], int(raw[2]), float(raw[3])),  # type: ignore[arg-type]
                            tuple(out))
