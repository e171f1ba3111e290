"""``hermes-core keys status``: per key fingerprint, state, blocked-until, recent requests and,
for a key quarantined after the provider rejected it, when one request rechecks it.

Keys are shown by fingerprint only. With the in-memory backend a fresh process knows nothing of
other processes, so the states are meaningful with a shared backend (``credential_pool.backend``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from hermes_core.cli.argtypes import columns, pad, terminal_safe
from hermes_core.config import load_settings


def register(sub: Any) -> None:
    p = sub.add_parser("keys", help="API key pool status")
    ksub = p.add_subparsers(dest="keys_command", metavar="SUBCOMMAND")
    s = ksub.add_parser("status", help="per key: fingerprint, state, blocked-until, requests",
                        examples=("hermes-core keys status", "hermes-core keys status --json"))
    s.add_argument("--home", metavar="DIR", help="HERMES_HOME (default: $HERMES_HOME or ~/.hermes)")
    s.add_argument("--config", help="config YAML (default: HERMES_HOME/config.yaml)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(handler=status)
    p.set_defaults(handler=lambda args: (p.print_help(sys.stderr), 2)[1])


def status(args: argparse.Namespace) -> int:
    from hermes_core.agent.credential_pool import CredentialPool

    settings = load_settings(args.config, home=args.home)
    pool = CredentialPool.from_settings(settings)
    rows = pool.status()
    if args.json:
        print(json.dumps({"backend": settings.credential_pool.backend,
                          "keys": [r.as_dict() for r in rows]}))
        return 0
    if not rows:
        print("no API keys configured (credentials.<provider>.keys, or OPENAI_API_KEY / "
              "ANTHROPIC_API_KEY)")
        return 0
    width = max(12, *(columns(terminal_safe(r.provider)) for r in rows))
    print(f"{pad('provider', width)} {'key':<16} {'state':<13} {'blocked until':<22} {'req/min':>7}  "
          f"{'next recheck'}")
    for r in rows:
        until = _when(r.blocked_until)
        # a quarantined key: when one request rechecks it, and how many rejections in a row
        recheck = (f"{_when(r.recheck_at)} (rejected {r.auth_failures}x)"
                   if r.recheck_at is not None else "-")
        # a provider's name is free text in the config: shown escaped, padded by columns
        print(f"{pad(r.provider, width)} {r.fingerprint:<16} {r.state:<13} {until:<22} "
              f"{r.requests_last_window:>7}  {recheck}")
    return 0


def _when(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if at else "-"
