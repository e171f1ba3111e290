"""The tuning of the Redis pool backend (:class:`RedisPoolOptions`) and where each comes from in
the ``credential_pool`` settings.

Split from :mod:`hermes_core.agent.pool.redis` (which re-exports both): the backend's module
holds what it does, this one what it is told.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.agent.pool.reconnect import WAIT_S

if TYPE_CHECKING:  # pragma: no cover
    from hermes_core.config import CredentialPoolSettings

DEFAULT_PREFIX = "hermes:pool"


@dataclass(frozen=True, slots=True)
class RedisPoolOptions:
    """Tuning for :class:`RedisPoolState` (from ``credential_pool`` settings)."""

    key_prefix: str = DEFAULT_PREFIX
    lease_ttl_s: float = 300.0          # an in-flight lease outlives any request deadline
    state_ttl_s: float = 7 * 86400.0    # idle pool state (removals, breakers, cursor) expires
    workers: int = 1                    # processes sharing the keys: divides fallback budgets
    # how long a worker's slot (its index among the workers, see worker_share) outlives its last
    # renewal; renewed by acquires a third of that apart
    slot_ttl_s: float = 60.0
    reconnect_interval_s: float = 5.0   # how often a degraded backend probes Redis
    # how long the request that starts a probe waits for Redis to answer it (reconnect.py): the
    # rest of the probe of a stuck Redis runs in the probe's thread, not in a request
    probe_wait_s: float = WAIT_S
    socket_timeout_s: float = 0.5       # a hung Redis must not stall calls for long
    # processes take turns in the order they started waiting (fleet_queue; the redis_fleet_queue,
    # redis_queue_grace_s, redis_queue_poll_s settings): a place outlives the time its holder
    # said it would ask again by grace; one behind others asks every poll
    fleet_queue: bool = True
    queue_grace_s: float = 2.0
    queue_poll_s: float = 0.05


def options_from_settings(cp: CredentialPoolSettings) -> RedisPoolOptions:
    """The ``credential_pool`` settings that tune the Redis backend."""
    return RedisPoolOptions(
        key_prefix=cp.redis_key_prefix, lease_ttl_s=cp.redis_lease_ttl_s,
        state_ttl_s=cp.redis_state_ttl_s, workers=cp.workers,
        reconnect_interval_s=cp.redis_reconnect_s, socket_timeout_s=cp.redis_timeout_s,
        fleet_queue=cp.redis_fleet_queue, queue_grace_s=cp.redis_queue_grace_s,
        queue_poll_s=cp.redis_queue_poll_s)
