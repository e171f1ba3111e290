"""``hermes-core skills``: search, list, reindex, eval."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from hermes_core.cli.argtypes import json_text, positive_int, print_mapping, terminal_safe, whole_number
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError


def register(sub: Any) -> None:
    p = sub.add_parser("skills", help="skill retrieval: search, list, reindex, eval")
    ssub = p.add_subparsers(dest="skills_command", metavar="SUBCOMMAND")

    def source(sp: argparse.ArgumentParser) -> None:
        g = sp.add_mutually_exclusive_group()
        g.add_argument("--home", help="HERMES_HOME whose skills/ folder to use")
        g.add_argument("--catalog", help="a JSONL catalog instead of SKILL.md folders")
        sp.add_argument("--config", help="config YAML")
        sp.add_argument("--no-embeddings", action="store_true",
                        help="no dense layer and no model load (L1-L3 and past use still rank)")

    s = ssub.add_parser("search", help="retrieve the skills for a query",
                        examples=("hermes-core skills search 'git rebase conflict' --explain",
                                  "hermes-core skills search 帮我查快递 --home examples/home --json"))
    s.add_argument("query")
    source(s)
    s.add_argument("--top-k", type=positive_int, default=None)
    s.add_argument("--json", action="store_true")
    s.add_argument("--explain", action="store_true", help="per-layer contributions and the gate")
    s.set_defaults(handler=_search)

    ls = ssub.add_parser("list", help="list the skills found",
                         examples=("hermes-core skills list --home examples/home",))
    source(ls)
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--raw", action="store_true",
                    help="descriptions as written: whole, and unscanned (by default each is shown "
                         "as the model sees it: clipped, a hostile one withheld)")
    ls.set_defaults(handler=_list)

    r = ssub.add_parser("reindex", help="refresh the index and embedding cache",
                        examples=("hermes-core skills reindex --home ~/.hermes",))
    source(r)
    r.add_argument("--json", action="store_true")
    r.set_defaults(handler=_reindex)

    e = ssub.add_parser("eval", help="Recall@k, MRR and gate rates on labelled queries",
                        examples=("hermes-core skills eval --home examples/home --queries queries.jsonl "
                                  "--negatives negatives.jsonl --json",))
    cat = e.add_mutually_exclusive_group(required=True)
    cat.add_argument("--catalog", help="a JSONL catalog file, or a folder of SKILL.md skills")
    cat.add_argument("--home", help="a HERMES_HOME: its skills/ folder (and configured ones)")
    e.add_argument("--usage", help="labelled queries to replay as past use before evaluating; "
                                   "prints zero_shot and with_usage side by side")
    e.add_argument("--queries", required=True)
    e.add_argument("--negatives")
    e.add_argument("--limit", type=positive_int, default=None, help="fixed-seed sample of N queries")
    e.add_argument("--seed", type=whole_number, default=7)
    e.add_argument("--layers", nargs="+", default=["L1,L2,L3,L4,L6"],
                   help="subset of L1 L2 L3 L4 L6 (space- or comma-separated; L6 is the usage layer)")
    e.add_argument("--fusion", choices=("zscore", "rrf"), default=None)
    e.add_argument("--config")
    e.add_argument("--no-embeddings", action="store_true")
    e.add_argument("--query-cache", action="store_true",
                   help="keep query vectors in the on-disk embedding cache, so a re-run embeds nothing "
                        "(fast tuning runs; latency then excludes query embedding)")
    e.add_argument("--per-layer", action="store_true",
                   help="also rank by each layer alone (per_layer: Recall@1/@5, MRR@10 per layer)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(handler=_eval)
    p.set_defaults(handler=lambda a: (p.print_help(sys.stderr), 2)[1])


def _retriever(args: argparse.Namespace, **kw: Any) -> Any:
    from hermes_core.retrieval.dense import default_embedders
    from hermes_core.retrieval.retriever import LAYERS, SkillRetriever, build_retriever
    from hermes_core.retrieval.tuning import layer_weights
    settings = load_settings(getattr(args, "config", None), home=getattr(args, "home", None))
    if getattr(args, "no_embeddings", False):
        settings = settings.with_overrides(**{"skill_utils.embeddings": False})
    su = settings.skill_utils
    catalog = getattr(args, "catalog", None)
    if catalog:
        folder = Path(catalog).is_dir()
        if folder and not kw.get("folders_ok"):
            raise ConfigError("is a directory, not a JSONL catalog file", file=catalog)
        if not folder and not Path(catalog).exists():
            raise ConfigError("catalog file not found", file=catalog)
        if not folder and not Path(catalog).is_file():   # reading a FIFO would wait forever
            raise ConfigError("not a regular file (a pipe or device?), not a JSONL catalog", file=catalog)
        embedders = default_embedders(su.embedding_model, su.query_adapter) if su.embeddings else []
        layer_weights(su.weights, file=settings.source)  # a bad key fails naming the file
        r = SkillRetriever(su, catalogs=[] if folder else [catalog], folders=[catalog] if folder else [],
                           embedders=embedders, cache_dir=settings.home_path / "cache" / "embeddings",
                           layers=kw.get("layers") or LAYERS)
        p = settings.prompt   # as build_retriever does: the home's scan settings hold here too
        r.scan_categories = tuple(p.injection_categories) if p.injection_scan else ()
    else:
        # search and list only read: the usage history is learnt from, never written (not even
        # the once-per-key rewrite of queries stored before a key was configured: shown redacted)
        r = build_retriever(settings, home=getattr(args, "home", None),
                            read_only=bool(kw.get("read_only")))
    if r.scan_categories:   # the descriptions found clean are kept in the home, as by a chat
        from hermes_core.injection.verdicts import use_home_cache
        use_home_cache(settings.home_path / "cache" / "injection")
    if kw.get("top_k"):
        r.top_k = kw["top_k"]
    if kw.get("layers"):
        r.layers = tuple(kw["layers"])
    if kw.get("fusion"):
        r.fusion = kw["fusion"]
    return r


def _search(args: argparse.Namespace) -> int:
    from hermes_core.injection import notices_in
    from hermes_core.retrieval.result import render
    from hermes_core.retrieval.second_opinion import MARGIN, keeps
    r = _retriever(args, top_k=args.top_k, read_only=True)
    res = r.retrieve(args.query)
    shown = render(res, r.scan_categories) if res.skills else ""
    # the skills whose description the scan kept out of the block (decision 228)
    withheld = [name for name, _why, what in notices_in(shown) if what == "description"]
    if args.json:
        out: dict[str, Any] = {
            "query": res.query, "layer": res.layer, "gated": res.gated,
            "skills": [{"name": s.name, "score": round(sc, 4)} for s, sc in zip(res.skills, res.scores,
                                                                               strict=True)],
            "answered": list(res.answered),
            "timings_ms": {k: round(v, 3) for k, v in res.timings_ms.items()},
        }
        if args.explain:
            out["contributions"] = {k: {n: round(v, 4) for n, v in c.items()}
                                    for k, c in res.contributions.items()}
            out["candidates"] = list(res.candidates)
            out["gate"] = None if res.gate is None else {
                "passed": res.gate.passed, "score": round(res.gate.score, 4),
                "threshold": res.gate.threshold, "rule": res.gate.rule}
            o, g = res.second_opinion, res.gate
            # "kept": the translation's own verdict; "final": what decided the request (past use
            # may keep a request its translation did not)
            out["second_opinion"] = None if o is None or g is None else {
                "translation": res.translation, "rule": o.rule, "score": round(o.score, 4),
                "threshold": round(o.threshold, 4), "margin": MARGIN, "kept": keeps(o),
                "final": {"passed": g.passed, "rule": g.rule}}
            out["trigger"] = None if res.trigger is None else {
                "skill": res.trigger.skill, "trigger": res.trigger.trigger, "tier": res.trigger.tier}
            u = res.usage
            out["usage"] = None if u is None else {
                "nearest": u.nearest, "nearest_skill": u.nearest_skill, "precision": round(u.precision, 4),
                "weight": round(u.weight, 4), "neighbours": u.neighbours}
            out["usage_events"] = None if r.usage is None else len(r.usage.store)
            # why the layer is silent, as the text form says it (null where that says nothing)
            out["usage_reason"] = (_usage_silence(r).removeprefix("usage: ")
                                   if u is None and res.layer == "L5" else None)
            out["withheld"] = withheld
        print(json_text(out))
        return 0
    if not res.skills:
        why = "gated: no skill fits" if res.gated else "no skills found"
        print(f"(no skills; {why})")
        if res.layer == "none":
            _where_looked(r)
    else:
        print(terminal_safe(shown), end="")
    if args.explain:
        print(f"\nlayer={res.layer} answered={','.join(res.answered)} "
              f"total={res.timings_ms.get('total', 0):.1f}ms")
        if withheld:
            print(f"withheld: {', '.join(withheld)} (description blocked as a possible prompt "
                  "injection; the skill is still listed)")
        if res.gate is not None:
            g = res.gate
            print(f"gate: {'pass' if g.passed else 'reject'} rule={g.rule} "
                  f"score={g.score:.4f} threshold={g.threshold:.4f}"
                  + (" (calibrated on this catalog)" if g.calibrated else ""))
            o = res.second_opinion
            if o is not None:   # the gate asked its second opinion (second_opinion.py)
                print(f"second opinion: {res.translation!r} rule={o.rule} score={o.score:.4f} "
                      f"threshold={o.threshold:.4f} + margin {MARGIN:g}: the translation "
                      + ("keeps it" if keeps(o) else "does not keep it")
                      + f"; final: {'pass' if g.passed else 'reject'} by rule={g.rule}")
        if res.usage is not None:
            u = res.usage
            print(f"usage: nearest past message {u.nearest!r} -> {u.nearest_skill} "
                  f"(precision {u.precision:.2f}, weight {u.weight:.2f}, {u.neighbours} voting)")
        elif res.layer == "L5":
            print(_usage_silence(r))
        for name, parts in res.contributions.items():
            print(f"  {name}: " + " ".join(f"{k}={v:+.4f}" for k, v in parts.items()))
    return 0


def _usage_silence(r: Any) -> str:
    """Why the usage layer did not answer: a layer shown only by its absence from ``answered``
    reads as a bug to whoever is checking that learning works."""
    if r.usage is None or "L6" not in r.layers:
        return "usage: off (skill_utils.learn: false)" if r.usage is None else "usage: off (--layers)"
    n = len(r.usage.store)
    if r.usage.store.unreadable:   # not "no past use": the history is there, just not readable
        return "usage: off (the usage history cannot be read; see the warning above)"
    if not n:
        return "usage: abstained (no past use recorded)"
    return f"usage: abstained ({n} past use{'s' if n != 1 else ''}, too little to trust)"


def _list(args: argparse.Namespace) -> int:
    from hermes_core.retrieval.result import shown_descriptions
    r = _retriever(args, read_only=True)
    catalog = r.load_catalog(warn=False)  # no index build, no model load
    skills = sorted(catalog.skills, key=lambda s: s.name)
    unavailable = sorted(catalog.unavailable, key=lambda pair: pair[0].name)
    # what the model is shown of each (decision 232): clipped, a hostile one withheld
    shown = [(s.description, None) for s in skills] if args.raw \
        else shown_descriptions(skills, tuple(r.scan_categories))
    if args.json:
        # unscanned (--raw), a row says nothing of what the model is shown: null would read "shown"
        rows = [_row(s) if args.raw else
                {**_row(s), "withheld": why.describe() if why is not None else None}
                for s, (_d, why) in zip(skills, shown, strict=True)]
        rows += [{**_row(s), "available": False, "reason": why} for s, why in unavailable]
        print(json_text(rows))
    else:
        for s, (description, _why) in zip(skills, shown, strict=True):
            print(terminal_safe(f"{s.name}\t{description}"))
        for s, why in unavailable:
            print(terminal_safe(f"{s.name}\t(not available here: {why})"))
    for issue in catalog.issues:
        print(terminal_safe(f"warning: {issue}"), file=sys.stderr)   # a folder's name is anyone's
    if not skills:
        _where_looked(r)
    return 0


def _where_looked(r: Any) -> None:
    """Say where skills were looked for: an empty answer looks like a broken command."""
    from hermes_core.retrieval.skills import user_path
    for folder in getattr(r, "folders", ()):
        path = user_path(folder)
        try:
            if not path.is_dir():
                state = "does not exist"
            elif next(path.iterdir(), None) is None:
                state = "is empty"
            else:   # folders whose SKILL.md were skipped (each warned), or other files only
                state = "holds no usable SKILL.md"
        except OSError as e:   # a folder we may not list: its own warning says so too
            state = f"cannot be listed ({e.strerror or e})"
        print(terminal_safe(f"no skills: {path} {state}"), file=sys.stderr)


def _row(s: Any) -> dict[str, Any]:
    return {"name": s.name, "description": s.description, "path": s.path, "available": True,
            "platforms": list(s.platforms), "tags": list(s.tags), "license": s.license,
            "allowed_tools": list(s.allowed_tools)}


def _reindex(args: argparse.Namespace) -> int:
    from hermes_core.retrieval.skills import index_delta, read_snapshot, snapshot_path, write_snapshot
    t = time.perf_counter()
    r = _retriever(args)
    # the index is this process's, built from nothing: the counts are against the last reindex
    record = snapshot_path(r.cache_dir, r.folders, r.catalogs) if r.folders or r.catalogs else None
    before = read_snapshot(record)
    delta = r.refresh()
    if record is not None:
        after = dict(r.index.hashes)
        if before is not None:
            delta = index_delta(before, after)
        write_snapshot(record, after)
    out = {"skills": len(r.skills), "added": len(delta.added), "changed": len(delta.changed),
           "removed": len(delta.removed), "embedded_docs": r.embedded_docs,
           "issues": [str(i) for i in r.issues], "seconds": round(time.perf_counter() - t, 3)}
    if args.json:
        print(json_text(out))
    else:
        # each issue was already logged as a warning by the catalog loader
        print(f"{out['skills']} skills; embedded {out['embedded_docs']} new document(s); "
              f"{len(out['issues'])} issue(s) in {out['seconds']}s")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from hermes_core.retrieval.evaluate import (
        evaluate,
        evaluate_layers,
        evaluate_with_usage,
        load_queries,
        sample,
    )
    layers = tuple(x.strip().upper() for x in ",".join(args.layers).split(",") if x.strip())
    bad = [x for x in layers if x not in ("L1", "L2", "L3", "L4", "L6")]
    if bad or not layers:
        raise ConfigError(f"--layers: unknown layer(s) {', '.join(bad) or '(none)'}; use L1,L2,L3,L4,L6")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    r = _retriever(args, layers=layers, fusion=args.fusion, folders_ok=True)
    r.persist_query_vectors(args.query_cache)
    def read(path: str) -> list[Any]:
        # an empty file measured nothing: every figure would print as null, with exit 0
        if not (got := load_queries(path)):
            raise ConfigError("holds no query line", file=path)
        return got

    queries = sample(read(args.queries), args.limit, args.seed)
    negatives = read(args.negatives) if args.negatives else []
    if args.usage:
        result: dict[str, Any] = evaluate_with_usage(r, queries, negatives, read(args.usage),
                                                     per_layer=args.per_layer)
        result["calibration"] = r.calibration_report()
    else:
        result = evaluate(r, queries, negatives)
        if args.per_layer:
            result["per_layer"] = evaluate_layers(r, queries)
    result["query_cache"] = bool(args.query_cache)
    print_mapping(result, as_json=args.json)
    return 0
