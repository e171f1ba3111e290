"""A day behind a proxy that answers the odd 401 for valid keys: quarantine against removal.

One request every 10 s for 24 h (8,640) through a pool of 4 valid keys and 1 revoked one, on an
injected clock. Each request to a valid key is rejected with probability ``p`` (an auth backend
hiccup, a proxy restart); every request to the revoked key is rejected. The same traffic (same
seeds) runs twice in one process:

* ``removal``: ``auth_max_strikes: 1``, the pool's rule before quarantine (the first rejection
  removes a key for good);
* ``quarantine``: the shipped defaults (recheck after 60 s, doubling to 1 h, removed at the 8th
  rejection in a row).

Per policy and ``p``, medians over the seeds: valid keys left at the end of the day, requests that
found no key (each a failed turn, or a failover to another provider), and requests the revoked
key got (what quarantine costs). Nothing is timed: the figures are counts, so the machine's load
does not move them.

    python benchmarks/flaky_auth.py --json [--seeds N] [--requests N]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
from dataclasses import replace

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState, PoolPolicy
from hermes_core.cli.argtypes import positive_int
from hermes_core.errors import NoCredentialAvailable
from hermes_core.testing import FakeClock
from hermes_core.types import Credential

STRAY_401 = (0.001, 0.005)
POLICIES = {"removal": replace(PoolPolicy(), auth_max_strikes=1), "quarantine": PoolPolicy()}


def day(policy: PoolPolicy, p: float, seed: int, requests: int) -> dict[str, int]:
    rng = random.Random(seed)
    clock = FakeClock(1000.0)
    valid = [Credential("proxy", f"bench-valid-{i}-0123456789abcdef") for i in range(4)]
    revoked = Credential("proxy", "bench-revoked-0123456789abcdef")
    pool = CredentialPool({"proxy": [*valid, revoked]}, policy=policy,
                          backend=InMemoryPoolState(clock), rng=random.Random(seed))
    no_key = to_revoked = 0
    for _ in range(requests):
        clock.t += 10.0
        try:
            lease = pool.acquire("proxy")
        except NoCredentialAvailable:
            no_key += 1
            continue
        if lease.credential is revoked:
            to_revoked += 1
            pool.remove(lease, "HTTP 401")
        elif rng.random() < p:
            pool.remove(lease, "HTTP 401")
        else:
            pool.success(lease)
    left = sum(r.state != "removed" for r in pool.status("proxy")
               if r.fingerprint != revoked.fingerprint)
    return {"valid_keys_left": left, "requests_without_key": no_key,
            "requests_to_revoked": to_revoked}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=positive_int, default=3)
    ap.add_argument("--requests", type=positive_int, default=8640)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)   # one alert per quarantine is the pool working, not news
    try:
        out: dict[str, object] = {"requests": args.requests, "seeds": args.seeds}
        for name, policy in POLICIES.items():
            for p in STRAY_401:
                runs = [day(policy, p, seed, args.requests) for seed in range(args.seeds)]
                out[f"{name}_p{p}"] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    finally:
        logging.disable(logging.NOTSET)
    if args.json:
        print(json.dumps(out))
    else:
        for key, figures in out.items():
            print(f"{key}: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
