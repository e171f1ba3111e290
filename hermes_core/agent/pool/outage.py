"""When a Redis error is an outage the credential pool serves around, and when it is a bug.

Split from :mod:`hermes_core.agent.pool.redis` (which uses it): a Redis that is unreachable, or
running but refusing commands (out of memory, failing snapshots, a read-only replica, a busy
script), sends the pool to its local fallback; any other error surfaces.
"""

from __future__ import annotations

import re

#: Error replies by which a running Redis says "not now" rather than "your command is wrong",
#: and what each means for a person reading the warning. They come back as ``ResponseError``s
#: (inside a script as "Error running script ... -OOM ..."), not as connection errors, yet the
#: pool can no more record a request than with Redis gone: each is an outage.
REFUSALS: dict[str, str] = {
    "OOM": "is out of memory (OOM: maxmemory reached under a noeviction policy)",
    "MISCONF": "refuses writes because its RDB snapshots fail (MISCONF)",
    "READONLY": "is a read-only replica (READONLY: failed over?)",
    "BUSY": "is busy running a script (BUSY)",
    "LOADING": "is loading its dataset (LOADING)",
    "MASTERDOWN": "is a replica that lost its master (MASTERDOWN)",
    "NOREPLICAS": "has too few replicas to accept writes (NOREPLICAS)",
    # not Redis's refusal but another's data under the prefix (:mod:`.foreign` names the keys)
    "WRONGTYPE": "holds data of another kind under the pool's key prefix (WRONGTYPE)",
}

_REPLY_CODE = re.compile(r"(?:^|\s-|:\s)([A-Z]+)\b")   # "-OOM ...", "@user_script:9: WRONGTYPE"


def redis_unavailable(exc: BaseException) -> str | None:
    """Why Redis cannot serve the pool now, for the outage warning ("is unreachable (...)",
    "is out of memory (OOM: ...)"), or None for an error that is not an outage (a bug: raised).

    redis-py strips the code of the replies it has a class for (``OutOfMemoryError``,
    ``ReadOnlyError``; ``BusyLoadingError`` is a ``ConnectionError``): those go by class, the
    rest by the reply's first word or, inside a script's error, the word after a dash or the
    script's line number."""
    import redis

    errors = redis.exceptions
    if isinstance(exc, errors.BusyLoadingError):
        return REFUSALS["LOADING"]
    if isinstance(exc, errors.ConnectionError | errors.TimeoutError):
        return f"is unreachable ({type(exc).__name__})"
    if isinstance(exc, errors.OutOfMemoryError):
        return REFUSALS["OOM"]
    if isinstance(exc, errors.ReadOnlyError):
        return REFUSALS["READONLY"]
    if isinstance(exc, errors.ResponseError) and not isinstance(exc, errors.NoScriptError):
        for code in _REPLY_CODE.findall(str(exc)):
            if code in REFUSALS:
                return REFUSALS[code]
    return None


def outage_reason(exc: Exception) -> str:
    """:func:`redis_unavailable`'s words for ``exc``; ``exc`` raised again when it is no outage
    (a bug in a script or a command must surface, not be served around)."""
    why = redis_unavailable(exc)
    if why is None:
        raise exc
    return why
