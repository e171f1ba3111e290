"""Two-provider failover against local mock servers, with the config in examples/failover.yaml.

The primary's first key is revoked (401) and its second allows one request a minute (then 429 with
Retry-After 30). Every turn is still answered: the revoked key is quarantined (one request rechecks
it a minute later), the cooling key is not tried again while blocked, and turns fail over to the
secondary provider.
Run: python examples/failover_demo.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.testing.server import KeyBehaviour, MockLLMServer

CONFIG = Path(__file__).parent / "failover.yaml"
KEYS = {"PRIMARY_KEY_1": "sk-demo-primary-revoked-000000", "PRIMARY_KEY_2": "sk-demo-primary-slow-11111",
        "SECONDARY_KEY": "sk-demo-secondary-2222222222"}


def main() -> int:
    with MockLLMServer(reply="answer from PRIMARY") as primary, \
            MockLLMServer(reply="answer from SECONDARY") as secondary, \
            tempfile.TemporaryDirectory() as home:
        primary.set_key(KEYS["PRIMARY_KEY_1"], KeyBehaviour(status=401))
        primary.set_key(KEYS["PRIMARY_KEY_2"], KeyBehaviour(rpm=1, retry_after=30))
        os.environ.update(KEYS, PRIMARY_URL=primary.url + "/v1", SECONDARY_URL=secondary.url + "/v1")
        agent = Agent.from_config(CONFIG, home=home)
        for i in range(3):
            reply = agent.chat(f"question {i + 1}")
            tried = ", ".join(f"{a.provider}:{a.status}" for a in reply.attempts)
            print(f"turn {i + 1}: {reply.text!r} via {reply.provider} (attempts: {tried})")
        for k in agent.pool.status():
            print(f"  {k.provider} {k.fingerprint}: {k.state}")
        revoked = [r for r in primary.requests if r.status == 401]
        assert len(revoked) == 1, "a revoked key is tried once, then quarantined"
        assert [r.status for r in primary.requests].count(429) <= 1, "no key tried while cooling"
        agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
