"""``hermes-core memory``: search, add, forget, stats and rebuild of the episodic-memory database.

The database is ``--db FILE`` when given, else ``context_engine.db_path`` from the config, else
``HERMES_HOME/sessions.db`` (``--home`` beats the environment). Only ``add`` creates a missing
database, and never the folder of a ``--db`` (a typo there would hide the session where no later
search looks); the other actions say clearly that there is none.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_core.agent.context_engine import ContextEngine, default_db_path, parse_timestamp
from hermes_core.agent.episodic.lookup import MIN_PREFIX_CHARS, SHOWN_IDS
from hermes_core.agent.episodic.ranking import FUTURE_SLACK_DAYS, SECONDS_PER_DAY
from hermes_core.cli.argtypes import (
    CLIP_AT,
    fail,
    json_text,
    positive_int,
    print_mapping,
    shorten,
    terminal_safe,
)
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError
from hermes_core.redact import redact

#: How far ahead of this machine's clock ``--created-at`` may be (another machine's clock skew);
#: recall weighs a stamp further ahead as the oldest.
FUTURE_SLACK_S = FUTURE_SLACK_DAYS * SECONDS_PER_DAY


def _timestamp(text: str) -> float:
    """``--created-at``: ISO 8601, not in the future. A session that has not happened yet is a
    typo (2062 for 2026), and recency weighting counts a future time as brand new: it would
    outrank every real session for decades."""
    if len(text) > CLIP_AT:   # no ISO 8601 time is this long; the message shows only its head
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date/time: {shorten(text)!r}")
    try:
        when = parse_timestamp(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if when > time.time() + FUTURE_SLACK_S:
        raise argparse.ArgumentTypeError(f"{text!r} is in the future; give the time the session "
                                         "happened")
    return when


def _score(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {shorten(text)!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be >= 0 and finite (got {shorten(text)})")
    return value


def register(subparsers: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="FILE", help="the memory database (default: HERMES_HOME/sessions.db)")
    common.add_argument("--home", metavar="DIR", help="HERMES_HOME (default: $HERMES_HOME or ~/.hermes)")
    common.add_argument("--config", metavar="FILE", help="config YAML (default: HOME/config.yaml if present)")
    common.add_argument("--json", action="store_true", help="print JSON")

    parser = subparsers.add_parser("memory", help="episodic memory of past sessions",
                                   description="Search and maintain the episodic-memory database.")
    actions = parser.add_subparsers(dest="memory_action", metavar="ACTION")
    parser.set_defaults(handler=lambda args: _usage(parser))

    search = actions.add_parser("search", parents=[common], help="find past sessions relevant to a query",
                                examples=("hermes-core memory search 'docker network'",
                                          "hermes-core memory search 快递 --max-results 3 --json",
                                          "hermes-core memory search -- -rebase"))
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--max-results", type=positive_int, default=None,
                        help="how many sessions (default: context_engine.max_results)")
    search.add_argument("--exclude-session", metavar="ID", help="leave this session out")
    search.set_defaults(handler=_search)

    add = actions.add_parser("add", parents=[common], help="store a session summary",
                             examples=("hermes-core memory add --session-id s1 --summary 'moved the "
                                       "db to NVMe' --tags db,ops --created-at 2026-03-01T09:00",))
    add.add_argument("--session-id", required=True, metavar="ID")
    add.add_argument("--summary", required=True, metavar="TEXT")
    add.add_argument("--tags", default="", metavar="A,B", help="comma-separated tags")
    add.add_argument("--created-at", type=_timestamp, default=None, metavar="ISO8601",
                     help="when the session happened (default: now; no offset means UTC)")
    add.add_argument("--relevance", type=_score, default=1.0, metavar="X",
                     help="stored prior that multiplies the score (default 1.0)")
    add.set_defaults(handler=_add)

    stats = actions.add_parser("stats", parents=[common], help="counts, time range, schema version",
                               examples=("hermes-core memory stats --json",))
    stats.set_defaults(handler=_stats)

    forget = actions.add_parser("forget", parents=[common],
                                help="delete one session's memory (its words leave the file too)",
                                examples=("hermes-core memory forget 93c7e6d2a142",))
    forget.add_argument("session_id", metavar="ID",
                        help="the session id as `memory search` shows it (its tags or the whole "
                             f"line may come with it), or its first {MIN_PREFIX_CHARS}+ characters")
    forget.set_defaults(handler=_forget)

    prune = actions.add_parser("prune", parents=[common],
                               help="delete the sessions context_engine.retention_days / "
                                    "max_sessions no longer keep, a few hundred a transaction",
                               examples=("hermes-core memory prune --home ~/.hermes",))
    prune.set_defaults(handler=_prune)

    rebuild = actions.add_parser("rebuild", parents=[common],
                                 help="re-create the full-text index from the sessions table",
                                 examples=("hermes-core memory rebuild --db ~/.hermes/sessions.db",))
    rebuild.set_defaults(handler=_rebuild)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _open(args: argparse.Namespace, *, create: bool, read_only: bool = False) -> ContextEngine:
    """The database; ``read_only`` for the actions that only read (search, stats): they leave
    the file's bytes and mtime as they were, even when a key was configured since a session
    holding it was stored (they show it redacted; the next chat or ``add`` rewrites the file)."""
    settings = load_settings(args.config, home=args.home)
    path = Path(args.db).expanduser() if args.db else default_db_path(settings)
    if args.db and create and not os.path.isdir(path.parent):   # a typo, never a new folder
        raise ConfigError(f"--db: the folder {path.parent} does not exist (create it first, or "
                          "check the spelling)", file=str(path))
    return ContextEngine(path, settings=settings.context_engine, create=create,
                         redactor=settings.redactor(), read_only=read_only)


def _iso(ts: float | None) -> str | float | None:
    """ISO 8601 in UTC; a stored time outside years 1-9999 (written through the API) stays raw
    epoch seconds rather than crashing ``memory stats``."""
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    except (ValueError, OverflowError, OSError):
        return ts


def _search(args: argparse.Namespace) -> int:
    with _open(args, create=False, read_only=True) as engine:
        n = args.max_results or engine.settings.max_results or 5
        fragments = engine.retrieve(args.query, n, args.exclude_session)
    if args.json:  # redacted: a database from before keys were scrubbed at record time
        print(redact(json_text([{**asdict(f), "tags": list(f.tags)} for f in fragments])))
        return 0
    if not fragments:
        print("no matching sessions")
        return 0
    for f in fragments:
        tags = f"  [{', '.join(f.tags)}]" if f.tags else ""
        print(terminal_safe(redact(f"{f.score:10.4g}  {f.age_days:7.1f}d  {f.session_id}{tags}")))
        print(f"            {terminal_safe(redact(f.summary)[:200])}")
    return 0


def _add(args: argparse.Namespace) -> int:
    if not args.session_id.strip():
        return fail(args, "hermes-core memory add: --session-id must not be empty", 2)
    if not args.summary.strip():
        return fail(args, "hermes-core memory add: --summary must not be empty", 2)
    with _open(args, create=True) as engine:
        res = engine.add(args.session_id, args.summary, args.tags, created_at=args.created_at,
                         relevance_score=args.relevance)
        db = str(engine.db_path)
    if args.json:
        print(json.dumps({"status": res.status, "session_id": res.session_id, "memory_id": res.memory_id,
                          "duplicate_of": res.duplicate_of, "db": db}, ensure_ascii=False))
    elif res.status == "duplicate":   # ids are shown, never sent: one may carry an escape sequence
        print(terminal_safe(f"not stored: session {res.duplicate_of} already holds this exact "
                            f"summary ({db})"))
    else:
        print(terminal_safe(f"{res.status} session {res.session_id} (memory id {res.memory_id}) "
                            f"in {db}"))
    return 0


def _stats(args: argparse.Namespace) -> int:
    with _open(args, create=False, read_only=True) as engine:
        stats = engine.stats()
    stats = {**stats, "oldest": _iso(stats["oldest"]), "newest": _iso(stats["newest"])}
    print_mapping(stats, as_json=args.json)
    return 0


def _forget(args: argparse.Namespace) -> int:
    if not args.session_id.strip():
        return fail(args, "hermes-core memory forget: the session ID must not be empty", 2)
    typed = shorten(args.session_id)
    with _open(args, create=False) as engine:
        found = engine.lookup(args.session_id)
        sid = found.unique
        gone = sid is not None and engine.forget(sid)
        db = str(engine.db_path)
    if len(found.ids) > 1:   # never a guess: forgetting cannot be undone
        many = (f"more than {SHOWN_IDS}" if len(found.ids) > SHOWN_IDS else str(len(found.ids)))
        shown = ", ".join(shorten(i) for i in found.ids[:SHOWN_IDS])
        return fail(args, f"hermes-core memory forget: {typed!r} is ambiguous: {many} sessions "
                          f"start with it ({shown}{', ...' if len(found.ids) > SHOWN_IDS else ''});"
                          " give more of the id", 1)
    if not gone:   # a typo must not look like success
        hint = (f"; {'more than ' + str(SHOWN_IDS) if found.shorter > SHOWN_IDS else found.shorter}"
                f" session(s) start with it: give at least {MIN_PREFIX_CHARS} characters of an "
                "id, or all of it" if found.shorter else "")
        return fail(args, f"hermes-core memory forget: no session {typed!r} is stored in {db}{hint}", 1)
    if args.json:
        print(json.dumps({"forgotten": True, "session_id": sid, "db": db}, ensure_ascii=False))
    else:
        print(terminal_safe(f"forgot session {sid} ({db})"))
    return 0


def _prune(args: argparse.Namespace) -> int:
    with _open(args, create=False) as engine:
        policy = engine.retention
        if not policy.active:   # nothing configured: say so rather than "pruned 0"
            return fail(args, "hermes-core memory prune: neither context_engine.retention_days "
                              "nor context_engine.max_sessions is set; nothing to prune", 2)
        n = engine.prune()
        db = str(engine.db_path)
    return _print_count(args, "pruned", n, db, f"pruned {n} session(s) from {db}")


def _rebuild(args: argparse.Namespace) -> int:
    with _open(args, create=False) as engine:
        n = engine.rebuild()
        db = str(engine.db_path)
    return _print_count(args, "reindexed", n, db, f"re-indexed {n} session(s) in {db}")


def _print_count(args: argparse.Namespace, key: str, n: int, db: str, text: str) -> int:
    """A maintenance command's result: ``{key: n, "db": db}`` with ``--json``, else ``text``."""
    print(json.dumps({key: n, "db": db}) if args.json else text)
    return 0
