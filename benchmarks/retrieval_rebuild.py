"""What an index rebuild costs on a large catalog when (almost) nothing changed, beside a baseline
measured in the same run.

    python benchmarks/retrieval_rebuild.py [--json] [--sizes 5000,20000] [--repeats N]

For each catalog size (synthetic skills with descriptions of three to six sentences, from a JSONL
catalog file as a large install would have):

* ``baseline_<n>_ms``: ``SkillIndex.refresh`` of the unchanged catalog into an empty index, i.e.
  hashing every skill's content: what any refresh pays to find out what changed. Each run gets
  skills it has not seen (copies), as a refresh that re-read the catalog does: a skill remembers
  its hash.
* ``dense_rebuild_<n>_ms``: ``DenseIndex.build`` again over the same, unchanged skills (every
  vector is in memory: nothing is embedded); ``dense_rebuild_<n>_ratio`` = that / baseline.
* ``refresh_one_changed_<n>_ms``: ``SkillRetriever.refresh`` after one skill of the JSONL file was
  edited, to a text not seen before each time (re-read, lexical layers, dense layer, gate
  calibration; one new vector to embed);
  ``refresh_one_changed_<n>_ratio`` = that / baseline.
* ``refresh_one_added_<n>_ms`` / ``refresh_one_deleted_<n>_ms`` (and ``_ratio``): the same after one
  skill was appended to the file, or one was removed from it (a different one each run).
* ``restart_one_changed_<n>_ms`` / ``_added_`` / ``_deleted_`` (and ``_ratio``): the same changes,
  refreshed by a retriever made anew over the same cache folder whose first refresh (of the
  catalog before the change, untimed) read every calibration from the cache: the first change
  after a restart. The process's memos
  (tokens, text keys) stay warm, so this isolates what the retriever itself kept or lost.
* ``first_refresh_<n>_ms`` (and ``_ratio``, to a baseline the same process measured): the first
  refresh of a new *process* (a child, ``--first-refresh``) over the cache folder the retriever
  above left, of the catalog it last saw: nothing in memory, what a restart pays before its first
  answer (imports not counted).
* ``calibrate_dense_<n>_ms`` / ``calibrate_lexical_<n>_ms`` (and ``_ratio``): one full calibration of
  the dense gate (no cache to read; reference and pseudo-query vectors in the embedding cache) and
  of the lexical gate over the unchanged catalog: what a change to the catalog cost on top when
  every change recalibrated whole.
* ``calibrate_lexical_edit_<n>_ms`` / ``_add_`` / ``_delete_`` (and ``_ratio``): the lexical
  gate's calibration alone after one skill was edited, added or deleted (its BM25 index built,
  untimed), updated from what the calibration before it kept (``lexical_update``).
  ``--lexical-only`` measures these and the baseline alone.
* ``calibrate_dense_edit_<n>_ms`` (and ``_ratio``): the dense gate's calibration alone after one
  skill was edited, updated from what the calibration before it kept (``gate_state``).
* ``calibrate_dense_restart_<n>_ms`` (and ``_ratio``): the same, in a process that kept nothing in
  memory, over the cache folder the calibration before the edit was saved to (with the update
  state, where it is saved).
* ``read_catalog_<n>_ms`` (and ``_ratio``): reading and validating the whole JSONL catalog, as a
  read without the memo of the last one does (a new process's first refresh).
* ``read_catalog_<change>_<n>_ms`` (and ``_ratio``), ``<change>`` one of ``changed`` (the middle
  line edited), ``added_top`` (a line inserted first: every other line moves) and ``deleted`` (a
  line a third of the way down removed): the same read with the memo of the read before the
  change (``catalog_memo``), as a retriever's refresh reads it; ``restart_changed``: the middle
  line edited, read by a new memo over the parses saved before the edit (``catalog_store``), as
  a new process's first refresh reads it.

``--restart`` measures a new process alone (``--sizes``' first size, 20,000 by default), each
figure from child processes over one catalog file, beside the baseline each child measured
(``SkillIndex.refresh`` of the same catalog), and with ``--baseline-library DIR`` for that
checkout's ``hermes_core`` too, the two alternated and each over a cache its own code wrote
(``--cases`` picks which of the three below):

* ``cold_<n>_ms`` (and ``_ratio``): a new process's first refresh over an empty cache folder.
* ``restart_<n>_ms`` (and ``_ratio``): a new process's first refresh over the cache folder a
  cold run left, of the same catalog: what a restart pays before its first answer.
* ``restart_edit_<n>_ms`` (and ``_ratio``): in such a process, the refresh after one skill of the
  file was edited (over a copy of that cache folder, so the next run meets it unchanged).
* ``cache_bytes_<n>`` / ``bm25_bytes_<n>``: the cache folder's size on disk after the runs, and
  its ``bm25/`` part's (the token memo and BM25 state).

The baseline library's figures are named ``baseline_library_...``.

The embedder is a stand-in that turns a text into a vector by hashing it (no model): what is
measured is the index's own bookkeeping, which a real model would only hide behind its own cost.
Times are medians of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import hashlib
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

# a child measuring another checkout's library (``--library DIR``) imports that one
sys.path.insert(0, next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--library"),
                        str(Path(__file__).resolve().parents[1])))

from hermes_core.cli.argtypes import positive_int
from hermes_core.retrieval.bm25 import BM25Index
from hermes_core.retrieval.catalog_memo import CatalogMemo
from hermes_core.retrieval.dense import DenseIndex
from hermes_core.retrieval.gate_state import GateMemo, calibrate_index
from hermes_core.retrieval.lexical_update import LexicalMemo
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.skills import SkillIndex, load_jsonl_catalog
from hermes_core.types import Skill

VERBS = ["create", "query", "update", "delete", "list", "share", "export", "cancel", "schedule",
         "search", "summarize", "convert", "send", "check", "book", "track"]
OBJECTS = ["route", "meeting", "invoice", "order", "appointment", "flight", "playlist", "document",
           "message", "forecast", "post", "album", "note", "workout", "recipe", "device", "ticket"]
CLAUSES = ["It works with the user's account and keeps a record of every change",
           "Results can be filtered by date, owner or status and exported as CSV",
           "Use it when the request names a specific item rather than a whole collection",
           "The service answers within a few seconds and retries once on a timeout",
           "Attachments up to ten megabytes are accepted and scanned before they are stored",
           "Notifications go to the owner and to anyone the item was shared with"]


class HashedVectors:
    """A stand-in embedder: each text's vector comes from its hash (no model, a few microseconds)."""

    model_id = "bench:hashed"
    dim = 64

    def _vec(self, text: str) -> np.ndarray:
        raw = np.frombuffer(hashlib.blake2b(text.encode("utf-8", "surrogatepass"),
                                            digest_size=self.dim).digest(), dtype=np.int8)
        v = raw.astype(np.float32)
        return v / max(float(np.linalg.norm(v)), 1e-6)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)

    def covers(self, text: str) -> bool:
        return True


def catalog_lines(n: int, seed: int = 11, edited: int | None = None, revision: int = 0) -> list[str]:
    """``n`` JSONL skill records; ``edited`` (an index) gets one more sentence, which names
    ``revision``: each revision is a text the index has not seen."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        v, o = rng.choice(VERBS), rng.choice(OBJECTS)
        sentences = [f"{v.capitalize()} a {o} in the {rng.choice(OBJECTS)} service"]
        sentences += rng.sample(CLAUSES, rng.randint(2, 5))
        if i == edited:
            sentences.append(f"It now also handles archived items, revision {revision}")
        out.append(json.dumps({"name": f"{o}-{v}-{i}", "description": ". ".join(sentences) + "."}))
    return out


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 2)


def measure(n: int, repeats: int, folder: Path) -> dict[str, float]:
    path = folder / f"catalog-{n}.jsonl"
    path.write_text("\n".join(catalog_lines(n)) + "\n", encoding="utf-8")
    skills: list[Skill] = sorted(load_jsonl_catalog(path)[0], key=lambda s: s.name)
    out: dict[str, float] = {}
    # cheap and the divisor of every ratio: three times the runs, for a steadier median
    copies = iter([[dataclasses.replace(s) for s in skills] for _ in range(3 * repeats)])
    base = median_ms(lambda: SkillIndex().refresh(next(copies)), 3 * repeats)
    out[f"baseline_{n}_ms"] = base

    dense = DenseIndex(HashedVectors())
    dense.build(skills)
    ms = median_ms(lambda: dense.build(skills), repeats)
    out[f"dense_rebuild_{n}_ms"] = ms
    out[f"dense_rebuild_{n}_ratio"] = round(ms / base, 3)

    r = SkillRetriever(catalogs=[path], embedders=[HashedVectors()], cache_dir=folder / f"cache-{n}")
    r.refresh()
    lines = catalog_lines(n + 2 * repeats)
    current = lines[:n]
    revision, appended = [0], [n]

    def edit() -> list[str]:
        # the same skill, a new text each time: a calibration cached for an earlier text (an edit
        # put back) would hide what an edit costs
        revision[0] += 1
        return catalog_lines(n, edited=n // 2, revision=revision[0])

    def add() -> list[str]:
        current.append(lines[appended[0]])   # the next skill of a longer catalog, appended
        appended[0] += 1
        return current

    def delete() -> list[str]:
        del current[len(current) // 3]        # a different skill each time
        return current

    for case, change in (("changed", edit), ("added", add), ("deleted", delete)):
        ms = _refresh_ms(path, change, lambda: r, repeats)
        out[f"refresh_one_{case}_{n}_ms"] = ms
        out[f"refresh_one_{case}_{n}_ratio"] = round(ms / base, 3)
        if case == "changed":   # back to the catalog the other cases start from
            path.write_text("\n".join(current) + "\n", encoding="utf-8")
            r.refresh()

    def edit_current() -> list[str]:
        # the middle skill of the catalog as it is now, a new sentence each time
        revision[0] += 1
        at = len(current) // 2
        record = json.loads(current[at])
        record["description"] += f" It now also handles archived items, revision {revision[0]}."
        return [*current[:at], json.dumps(record), *current[at + 1:]]

    def restarted() -> SkillRetriever:
        path.write_text("\n".join(current) + "\n", encoding="utf-8")
        fresh = SkillRetriever(catalogs=[path], embedders=[HashedVectors()], cache_dir=folder / f"cache-{n}")
        fresh.refresh()   # the catalog as the last process left it: its calibrations are cached
        return fresh

    for case, change in (("changed", edit_current), ("added", add), ("deleted", delete)):
        ms = _refresh_ms(path, change, restarted, repeats)
        out[f"restart_one_{case}_{n}_ms"] = ms
        out[f"restart_one_{case}_{n}_ratio"] = round(ms / base, 3)
    path.write_text("\n".join(current) + "\n", encoding="utf-8")
    r.refresh()
    runs = [_first_refresh(path, folder / f"cache-{n}") for _ in range(repeats)]
    out[f"first_refresh_{n}_ms"] = round(statistics.median(ms for ms, _ in runs), 2)
    out[f"first_refresh_{n}_ratio"] = round(statistics.median(ms / b for ms, b in runs), 3)

    indexed = r.index.ordered()
    (d,) = r.dense
    ms = median_ms(lambda: calibrate_index(d, indexed, None), repeats)   # no cache: computed each time
    out[f"calibrate_dense_{n}_ms"] = ms
    out[f"calibrate_dense_{n}_ratio"] = round(ms / base, 3)
    ms = _dense_update_ms(d, indexed, repeats)
    out[f"calibrate_dense_edit_{n}_ms"] = ms
    out[f"calibrate_dense_edit_{n}_ratio"] = round(ms / base, 3)
    ms = _dense_update_ms(d, indexed, repeats, folder / f"restart-{n}")
    out[f"calibrate_dense_restart_{n}_ms"] = ms
    out[f"calibrate_dense_restart_{n}_ratio"] = round(ms / base, 3)
    ms = median_ms(lambda: load_jsonl_catalog(path), repeats)
    out[f"read_catalog_{n}_ms"] = ms
    out[f"read_catalog_{n}_ratio"] = round(ms / base, 3)
    for case, ms in _memo_read_ms(path, current, repeats).items():
        out[f"read_catalog_{case}_{n}_ms"] = ms
        out[f"read_catalog_{case}_{n}_ratio"] = round(ms / base, 3)
    out.update(lexical_cases(r, indexed, repeats, base, n))
    return out


def lexical_cases(r: SkillRetriever, indexed: Sequence[Skill], repeats: int, base: float,
                  n: int) -> dict[str, float]:
    """The lexical gate's calibration whole, then after one edit, add and delete."""
    out: dict[str, float] = {}
    ms = median_ms(lambda: r._calibrate_lexical(indexed, r.bm25), repeats)
    out[f"calibrate_lexical_{n}_ms"] = ms
    out[f"calibrate_lexical_{n}_ratio"] = round(ms / base, 3)
    for change in ("edit", "add", "delete"):
        ms = _lexical_update_ms(r, indexed, repeats, change)
        out[f"calibrate_lexical_{change}_{n}_ms"] = ms
        out[f"calibrate_lexical_{change}_{n}_ratio"] = round(ms / base, 3)
    return out


def measure_lexical(n: int, repeats: int, folder: Path) -> dict[str, float]:
    """``--lexical-only``: the baseline and :func:`lexical_cases` alone."""
    path = folder / f"catalog-{n}.jsonl"
    path.write_text("\n".join(catalog_lines(n)) + "\n", encoding="utf-8")
    skills: list[Skill] = sorted(load_jsonl_catalog(path)[0], key=lambda s: s.name)
    copies = iter([[dataclasses.replace(s) for s in skills] for _ in range(3 * repeats)])
    base = median_ms(lambda: SkillIndex().refresh(next(copies)), 3 * repeats)
    r = SkillRetriever(catalogs=[path], embedders=[], cache_dir=folder / f"cache-{n}")
    r.refresh()
    return {f"baseline_{n}_ms": base, **lexical_cases(r, r.index.ordered(), repeats, base, n)}


def _refresh_ms(path: Path, change: Callable[[], list[str]], ready: Callable[[], SkillRetriever],
                repeats: int) -> float:
    """Median of ``repeats``: the catalog file rewritten by ``change``, then the refresh of the
    retriever ``ready`` gave (made before the change)."""
    times = []
    for _ in range(repeats):
        r = ready()
        path.write_text("\n".join(change()) + "\n", encoding="utf-8")
        t = time.perf_counter()
        r.refresh()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 2)


def _first_refresh(path: Path, cache: Path, library: Path | None = None,
                   edit: bool = False) -> tuple[float, float]:
    """A child process's first refresh of ``path`` over ``cache`` (``edit``: its refresh after one
    skill was edited) and its own baseline, in ms; ``library``: that checkout's ``hermes_core``."""
    args = [sys.executable, __file__, "--first-refresh", str(path), str(cache)]
    args += [*(["--library", str(library)] if library else []), *(["--edit"] if edit else [])]
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    got = json.loads(done.stdout)
    return float(got["edit_ms" if edit else "ms"]), float(got["baseline_ms"])


def first_refresh(path: Path, cache: Path, edit: bool = False) -> dict[str, float]:
    r = SkillRetriever(catalogs=[path], embedders=[HashedVectors()], cache_dir=cache)
    t = time.perf_counter()
    r.refresh()
    out = {"ms": (time.perf_counter() - t) * 1000}
    if edit:   # the middle skill, a sentence no run wrote before; the file is put back after
        lines = path.read_text(encoding="utf-8").splitlines()
        at = len(lines) // 2
        record = json.loads(lines[at])
        record["description"] += f" It now also handles archived items, run {time.time_ns()}."
        try:
            path.write_text("\n".join([*lines[:at], json.dumps(record), *lines[at + 1:]]) + "\n",
                            encoding="utf-8")
            t = time.perf_counter()
            r.refresh()
            out["edit_ms"] = (time.perf_counter() - t) * 1000
        finally:
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    skills = r.index.ordered()
    copies = iter([[dataclasses.replace(s) for s in skills] for _ in range(9)])
    out["baseline_ms"] = median_ms(lambda: SkillIndex().refresh(next(copies)), 9)
    return out


def restart(n: int, repeats: int, folder: Path, baseline: Path | None,
            cases: Sequence[str] = ("cold", "restart", "restart_edit")) -> dict[str, float]:
    """A new process's cold refresh, warm restart and first edit (see the module docstring),
    this checkout's library and ``baseline``'s alternated, each over a cache folder of its own;
    ``cases`` without ``cold``: one untimed cold run each first, which fills its folder."""
    path = folder / f"catalog-{n}.jsonl"
    path.write_text("\n".join(catalog_lines(n)) + "\n", encoding="utf-8")
    libraries: dict[str, Path | None] = {"": None}
    if baseline is not None:
        libraries = {"baseline_library_": baseline, **libraries}
    runs: dict[str, list[tuple[float, float]]] = {}
    if "cold" not in cases:
        for prefix, lib in libraries.items():
            _first_refresh(path, folder / f"cache-{prefix or 'this'}", lib)
    for case in cases:
        for r in range(repeats):
            for prefix, lib in libraries.items():
                cache = folder / f"cache-{prefix or 'this'}"
                if case == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                    run = _first_refresh(path, cache, lib)
                elif case == "restart":
                    run = _first_refresh(path, cache, lib)
                else:   # over a copy: the edit is not what the next run meets
                    copy = folder / f"edit-{prefix or 'this'}-{r}"
                    shutil.copytree(cache, copy)
                    run = _first_refresh(path, copy, lib, edit=True)
                    shutil.rmtree(copy)
                runs.setdefault(f"{prefix}{case}_{n}", []).append(run)
    out: dict[str, float] = {}
    for key, got in runs.items():
        out[f"{key}_ms"] = round(statistics.median(ms for ms, _ in got), 2)
        out[f"{key}_ratio"] = round(statistics.median(ms / b for ms, b in got), 3)
        out[f"{key}_runs_ms"] = [round(ms, 1) for ms, _ in got]   # type: ignore[assignment]
    for prefix in libraries:   # what each library's cache folder holds on disk after its runs
        cache = folder / f"cache-{prefix or 'this'}"
        if cache.is_dir():
            out[f"{prefix}cache_bytes_{n}"] = _bytes(cache)
            out[f"{prefix}bm25_bytes_{n}"] = _bytes(cache / "bm25")
    return out


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _memo_read_ms(path: Path, lines: list[str], repeats: int) -> dict[str, float]:
    """The catalog read with the memo of the read before one change (a new change each run),
    median of ``repeats`` per kind of change."""
    def edited(run: int) -> list[str]:
        at = len(lines) // 2
        record = json.loads(lines[at])
        record["description"] += f" Revision {run}."
        return [*lines[:at], json.dumps(record), *lines[at + 1:]]

    changes: dict[str, Callable[[int], list[str]]] = {
        "changed": edited,
        "added_top": lambda run: [json.dumps({"name": f"added-{run}", "description": "New."}), *lines],
        "deleted": lambda run: lines[:len(lines) // 3 + run] + lines[len(lines) // 3 + run + 1:],
    }
    out: dict[str, float] = {}
    for case, change in changes.items():
        memo, times = CatalogMemo(), []
        for run in range(repeats):
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            load_jsonl_catalog(path, memo)      # the refresh before the change
            path.write_text("\n".join(change(run)) + "\n", encoding="utf-8")
            t = time.perf_counter()
            load_jsonl_catalog(path, memo)
            times.append((time.perf_counter() - t) * 1000)
        out[case] = round(statistics.median(times), 2)
    # a new process over the parses a last one saved, the middle line edited since (imported here:
    # a --baseline-library child imports this file with a library that may predate catalog_store)
    from hermes_core.retrieval.catalog_store import CatalogCache

    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    saved, times = CatalogCache(path.parent / "catalog-cache", min_new=0), []
    load_jsonl_catalog(path, memo := CatalogMemo(saved.recall))
    saved.save(memo.reads())
    for run in range(repeats):
        path.write_text("\n".join(edited(repeats + run)) + "\n", encoding="utf-8")
        memo = CatalogMemo(CatalogCache(path.parent / "catalog-cache").recall)
        t = time.perf_counter()
        load_jsonl_catalog(path, memo)
        times.append((time.perf_counter() - t) * 1000)
    out["restart_changed"] = round(statistics.median(times), 2)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _dense_update_ms(d: DenseIndex, skills: Sequence[Skill], repeats: int,
                     cache: Path | None = None) -> float:
    """The dense gate's calibration alone after one skill's text changed (a new text each run),
    with what the calibration before it kept: in the retriever's memo (``cache`` None), or only in
    ``cache`` (a new memo each run, as in a restarted process), median of ``repeats``."""
    memo = GateMemo()
    calibrate_index(d, skills, cache, memo=memo)
    times = []
    for run in range(repeats):
        edited = list(skills)
        at = len(edited) // 2
        edited[at] = dataclasses.replace(edited[at], description=f"{edited[at].description} Run {run}.")
        d.build(edited)
        t = time.perf_counter()
        calibrate_index(d, edited, cache, memo=memo if cache is None else GateMemo())
        times.append((time.perf_counter() - t) * 1000)
    d.build(skills)
    return round(statistics.median(times), 2)


def _lexical_update_ms(r: SkillRetriever, skills: Sequence[Skill], repeats: int,
                       change: str = "edit") -> float:
    """The lexical gate's calibration alone after one skill's text changed (a new text each run),
    or one skill was added (a new name, in name order) or deleted (a different one each run),
    from what the calibration before it kept, median of ``repeats``."""
    memo = LexicalMemo()
    r._calibrate_lexical(skills, r.bm25, memo=memo)
    extra = [Skill(**json.loads(line)) for line in catalog_lines(len(skills) + repeats)[len(skills):]]
    times = []
    for run in range(repeats):
        edited = list(skills)
        at = len(edited) // 2
        if change == "add":
            bisect.insort(edited, extra[run], key=lambda s: s.name)
        elif change == "delete":
            del edited[len(edited) // 3]
        else:
            edited[at] = dataclasses.replace(edited[at], description=f"{edited[at].description} Run {run}.")
        bm25 = BM25Index(edited)
        t = time.perf_counter()
        r._calibrate_lexical(edited, bm25, memo=memo)
        times.append((time.perf_counter() - t) * 1000)
        skills = edited
    return round(statistics.median(times), 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sizes", default="5000,20000", help="catalog sizes, comma-separated")
    ap.add_argument("--repeats", type=positive_int, default=7)
    ap.add_argument("--lexical-only", action="store_true",
                    help="only the lexical gate's calibration cases (and the baseline)")
    ap.add_argument("--restart", action="store_true",
                    help="only a new process's cold refresh, warm restart and first edit")
    ap.add_argument("--cases", default="cold,restart,restart_edit",
                    help="with --restart: which, comma-separated")
    ap.add_argument("--baseline-library", type=Path, metavar="DIR",
                    help="with --restart: also measure this checkout's hermes_core, alternated")
    ap.add_argument("--first-refresh", nargs=2, metavar=("CATALOG", "CACHE"), help=argparse.SUPPRESS)
    ap.add_argument("--edit", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--library", type=Path, help=argparse.SUPPRESS)   # read before the imports
    args = ap.parse_args(argv)
    if args.first_refresh:
        print(json.dumps(first_refresh(*(Path(p) for p in args.first_refresh), edit=args.edit)))
        return 0
    out: dict[str, float | int] = {"repeats": args.repeats}
    with tempfile.TemporaryDirectory() as tmp:
        if args.restart:
            n = int(args.sizes.split(",")[0]) if args.sizes != ap.get_default("sizes") else 20_000
            out.update(restart(n, args.repeats, Path(tmp), args.baseline_library, args.cases.split(",")))
        for n in (int(x) for x in args.sizes.split(",")) if not args.restart else ():
            out.update((measure_lexical if args.lexical_only else measure)(n, args.repeats, Path(tmp)))
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:32s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
