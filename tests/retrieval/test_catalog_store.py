"""A catalog's saved parses read back as a fresh parse reads the lines, or not at all."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import catalog_store as store
from hermes_core.retrieval import skills as skills_mod
from hermes_core.retrieval.catalog_memo import CatalogMemo, ParsedLine
from hermes_core.retrieval.catalog_store import CatalogCache, catalog_file, load_lines
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.skills import load_jsonl_catalog
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from hermes_core.types import Skill
from tests.retrieval.conftest import damage, first_use_in_a_fresh_process, logged, write_catalog

T = TypeVar("T")

RECORDS: list[object] = [
    {"name": "invoice-pdf", "description": "Extract the table of an invoice PDF", "category": "docs",
     "triggers": ["invoice", "bill"], "tags": ["pdf", "pdf", "tables"], "license": "MIT",
     "metadata": {"owner": "billing", "nested": {"n": [1, 2.5, None, True]}}},
    {"name": "会议纪要", "description": "整理会议记录。列出待办事项", "synonyms": "纪要", "category": ""},
    {"name": "emoji-\U0001F600", "description": "Reply with a smile \ud83d", "platforms": ["darwin"],
     "allowed-tools": "Bash Read, Write", "license": ""},
    {"name": "long-one", "description": "word " * 300, "body": "Run it.\nThen check."},
    {"name": "x" * 70, "description": "A dotted id longer than the agentskills limit"},
    {"name": "", "description": "refused: no name"},
    {"name": "nul-inside", "description": "a NUL inside \u0000 a description", "metadata": {}},
]


def _write(path: Path, records: list[object], extra: list[str] = ()) -> list[bytes]:   # type: ignore[assignment]
    text = "".join(json.dumps(r) + "\n" for r in records) + "".join(f"{x}\n" for x in extra)
    path.write_text(text, encoding="utf-8")
    return path.read_bytes().split(b"\n")


def _saved(tmp_path: Path, records: list[object], extra: list[str] = ()) -> tuple[Path, Path]:   # type: ignore[assignment]
    catalog = tmp_path / "catalog.jsonl"
    _write(catalog, records, extra)
    cache = CatalogCache(tmp_path / "c", min_new=1)
    memo = CatalogMemo(cache.recall)
    load_jsonl_catalog(catalog, memo)
    assert cache.save(memo.reads()) == 1
    return catalog, catalog_file(tmp_path / "c", str(catalog))


def _same(a: list[Skill], b: list[Skill]) -> None:
    assert a == b
    assert [(s.path, s.metadata, s.content_hash) for s in a] == [
        (s.path, s.metadata, s.content_hash) for s in b]


def test_a_restarted_read_equals_a_fresh_parse_skill_for_skill_and_issue_for_issue(tmp_path: Path) -> None:
    catalog, _ = _saved(tmp_path, RECORDS, ["", "not json", json.dumps(RECORDS[0])])
    fresh = load_jsonl_catalog(catalog)
    restarted = load_jsonl_catalog(catalog, CatalogMemo(CatalogCache(tmp_path / "c").recall))
    _same(restarted[0], fresh[0])
    assert restarted[1] == fresh[1] and len(fresh[1]) == 2   # the refused lines, parsed again
    assert len(fresh[0]) == 7 and fresh[0][-1].path is not None and fresh[0][-1].path.endswith(":10")


def test_a_restarted_read_parses_only_lines_it_has_not_saved_and_places_moved_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog, _ = _saved(tmp_path, RECORDS)
    edited = [{"name": "added-first", "description": "A new skill on top"}, *RECORDS]
    edited[2] = {**RECORDS[1], "description": "整理会议记录"}   # type: ignore[dict-item]
    _write(catalog, edited)
    parsed: list[bytes] = []
    real = skills_mod._parse_line

    def counted(line: bytes, where: str) -> ParsedLine:
        if line.strip():
            parsed.append(line)
        return real(line, where)

    monkeypatch.setattr(skills_mod, "_parse_line", counted)
    restarted = load_jsonl_catalog(catalog, CatalogMemo(CatalogCache(tmp_path / "c").recall))
    # the new line, the edited one, and the refused one (issues are not saved)
    assert sorted(json.loads(p)["name"] for p in parsed) == ["", "added-first", "会议纪要"]
    monkeypatch.setattr(skills_mod, "_parse_line", real)
    _same(restarted[0], load_jsonl_catalog(catalog)[0])


def test_a_restarted_read_warns_about_an_over_long_record_as_a_fresh_read_does(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    catalog, _ = _saved(tmp_path, RECORDS)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        load_jsonl_catalog(catalog)
    fresh = sorted(r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        load_jsonl_catalog(catalog, CatalogMemo(CatalogCache(tmp_path / "c").recall))
    assert sorted(r.getMessage() for r in caplog.records) == fresh and len(fresh) == 2


def test_the_file_is_written_again_only_when_enough_lines_were_parsed_or_dropped(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.jsonl"
    records = [{"name": f"tool-{i}", "description": f"Does task {i}"} for i in range(10)]
    _write(catalog, records)   # type: ignore[arg-type]
    cache = CatalogCache(tmp_path / "c", min_new=3)
    memo = CatalogMemo(cache.recall)
    load_jsonl_catalog(catalog, memo)
    assert cache.save(memo.reads()) == 1   # ten parsed
    _write(catalog, records[1:])           # type: ignore[arg-type]
    load_jsonl_catalog(catalog, memo)
    assert cache.save(memo.reads()) == 0   # one dropped
    _write(catalog, records[3:])           # type: ignore[arg-type]
    load_jsonl_catalog(catalog, memo)
    assert cache.save(memo.reads()) == 1   # three dropped since the file was written
    restarted = CatalogCache(tmp_path / "c", min_new=3)
    _write(catalog, records[5:])           # type: ignore[arg-type]
    memo = CatalogMemo(restarted.recall)
    load_jsonl_catalog(catalog, memo)
    assert restarted.save(memo.reads()) == 0   # two of the file's seven no longer there
    loaded = load_lines(catalog_file(tmp_path / "c", str(catalog)), str(catalog))
    assert loaded is not None and len(loaded) == 7


def test_without_a_cache_folder_nothing_is_read_or_written(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.jsonl"
    lines = _write(catalog, RECORDS)
    cache = CatalogCache(None, min_new=0)
    assert cache.recall(str(catalog), lines) == {}
    memo = CatalogMemo(cache.recall)
    load_jsonl_catalog(catalog, memo)
    assert cache.save(memo.reads()) == 0 and list(tmp_path.iterdir()) == [catalog]


def _serve(cache_dir: Path, catalog: Path, now: float) -> CatalogCache:
    """A process started at ``now`` serving ``catalog`` from ``cache_dir``: read, then saved."""
    cache = CatalogCache(cache_dir, min_new=1, clock=lambda: now)
    memo = CatalogMemo(cache.recall)
    load_jsonl_catalog(catalog, memo)
    cache.save(memo.reads())
    return cache


def test_the_file_of_a_catalog_no_process_used_for_long_is_removed_and_a_live_ones_kept(
        tmp_path: Path) -> None:
    day, start = 86_400.0, time.time()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    _write(first, RECORDS[:3])
    _write(second, RECORDS[3:])
    cache_dir = tmp_path / "c"
    _serve(cache_dir, first, start)
    _serve(cache_dir, second, start)          # two processes, two catalogs, one cache folder
    first_file, second_file = catalog_file(cache_dir, str(first)), catalog_file(cache_dir, str(second))
    assert first_file.exists() and second_file.exists()
    _serve(cache_dir, second, start + 20 * day)   # the second one's process restarted since
    _serve(cache_dir, first, start + 31 * day)
    assert first_file.exists() and second_file.exists()   # each used within 30 days
    _serve(cache_dir, first, start + 51 * day)
    assert first_file.exists() and not second_file.exists()   # the second, unused for 31 days
    assert load_lines(first_file, str(first)) is not None


def test_a_file_of_another_parser_or_catalog_is_ignored_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    catalog, path = _saved(tmp_path, RECORDS)
    assert load_lines(path, str(catalog)) is not None
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert load_lines(path, str(tmp_path / "other.jsonl")) is None
        monkeypatch.setattr(store, "parser_fingerprint", lambda: "another")
        assert load_lines(path, str(catalog)) is None
    assert not caplog.records


def test_a_changed_parser_has_another_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    before = store.parser_id()
    assert store.parser_id() == before == store.parser_fingerprint()
    monkeypatch.setattr(skills_mod, "MAX_DESCRIPTION", 2048)
    assert store.parser_id() != before
    monkeypatch.undo()

    def _clean(text: str) -> str:
        return text.strip()

    _clean.__module__ = skills_mod.__name__
    monkeypatch.setattr(skills_mod, "_clean", _clean)
    assert store.parser_id() != before


def test_a_changed_default_argument_of_the_parser_misses_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    before = store.parser_id()
    defaults = skills_mod.skill_from_mapping.__kwdefaults__
    assert defaults
    monkeypatch.setattr(skills_mod.skill_from_mapping, "__kwdefaults__", {**defaults, "body": "changed"})
    assert store.parser_id() != before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.one_of(st.none(), st.integers(0, 10_000)), flip=st.integers(0, 10_000))
def test_a_torn_or_flipped_file_reads_as_written_or_as_nothing_with_one_warning(
        tmp_path: Path, cut: int | None, flip: int) -> None:
    (tmp_path / f"c{cut}-{flip}").mkdir(exist_ok=True)
    catalog, path = _saved(tmp_path / f"c{cut}-{flip}", RECORDS)
    want = load_lines(path, str(catalog))
    assert want is not None and len(want) == 6
    damage(path, cut, flip)
    got, records = logged(lambda: load_lines(path, str(catalog)))
    if got is None:
        assert [r.levelno for r in records] == [logging.WARNING] and str(path) in records[0].getMessage()
    else:
        assert got.keys() == want.keys()
        for line, p in got.items():
            assert p == want[line] and p.skill is not None and want[line].skill is not None
            assert (p.skill.metadata, p.skill.content_hash) == (want[line].skill.metadata,
                                                                want[line].skill.content_hash)


def test_a_damaged_file_is_parsed_whole_with_one_warning_then_written_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    catalog, path = _saved(tmp_path, RECORDS)
    damage(path, None, 200)
    caplog.clear()
    cache = CatalogCache(tmp_path / "c", min_new=1)
    memo = CatalogMemo(cache.recall)
    with caplog.at_level(logging.WARNING):
        got = load_jsonl_catalog(catalog, memo)
    about = [r.getMessage() for r in caplog.records if str(path) in r.getMessage()]
    assert len(about) == 1 and "catalog cache" in about[0]
    _same(got[0], load_jsonl_catalog(catalog)[0])
    assert cache.save(memo.reads()) == 1 and load_lines(path, str(catalog)) is not None


def test_the_parsers_fingerprint_is_the_same_in_every_process() -> None:
    """A set's or a table's items are listed in a stable order: a new process (another string
    hashing) must find the file its last process wrote."""
    import os
    import subprocess
    import sys

    code = "from hermes_core.retrieval.catalog_store import parser_fingerprint; print(parser_fingerprint())"
    got = {subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert got == {store.parser_fingerprint() + "\n"}


def _nested(depth: int) -> str:
    return ('{"name": "deep", "description": "metadata nested near the limit", "metadata": {"k": '
            + "[" * depth + "]" * depth + "}}")


def _deeper(frames: int, call: Callable[[], T]) -> T:
    return call() if frames == 0 else _deeper(frames - 1, call)


def test_metadata_nested_near_the_recursion_limit_is_parsed_again_not_a_crash(tmp_path: Path) -> None:
    """A fresh read takes a line nested as deeply as its stack allows; the cache's own JSON of
    its metadata is written and read at other depths (a save called deeper, a recall two calls
    further down), where the same nesting raised RecursionError out of the refresh, and the
    saved file raised it again on every restart."""
    catalog = tmp_path / "catalog.jsonl"
    low, high = 1, 100_000   # the deepest a fresh read takes, from this very frame
    while low < high:
        mid = (low + high + 1) // 2
        catalog.write_text(_nested(mid) + "\n", encoding="utf-8")
        low, high = (mid, high) if load_jsonl_catalog(catalog)[0] else (low, mid - 1)
    catalog.write_text(_nested(low) + "\n" + "\n".join(json.dumps(r) for r in RECORDS[:3]) + "\n",
                       encoding="utf-8")
    fresh = load_jsonl_catalog(catalog)
    assert len(fresh[0]) == 4
    cache = CatalogCache(tmp_path / "c", min_new=1)
    memo = CatalogMemo(cache.recall)
    load_jsonl_catalog(catalog, memo)
    assert _deeper(40, lambda: cache.save(memo.reads())) == 1
    restarted = load_jsonl_catalog(catalog, CatalogMemo(CatalogCache(tmp_path / "c").recall))
    _same(restarted[0], fresh[0])
    cache = CatalogCache(tmp_path / "c2", min_new=1)
    memo = CatalogMemo(cache.recall)
    load_jsonl_catalog(catalog, memo)
    assert cache.save(memo.reads()) == 1   # saved from as high up as the read: the line too
    restarted = load_jsonl_catalog(catalog, CatalogMemo(CatalogCache(tmp_path / "c2").recall))
    _same(restarted[0], fresh[0])


def test_a_users_own_file_of_the_caches_naming_is_kept_when_the_cache_folder_is_their_project(
        tmp_path: Path) -> None:
    # a retriever told to cache in the user's project folder, where ``catalogs/`` already holds
    # the user's own arrays named by a hash: the sweep removes only what the cache wrote
    project, day, start = tmp_path / "project", 86_400.0, time.time()
    theirs = project / "catalogs" / ("0123456789abcdef" + ".npz")
    theirs.parent.mkdir(parents=True)
    np.savez(theirs, weights=np.arange(4.0))
    os.utime(theirs, (start - 90 * day, start - 90 * day))
    catalog, other = tmp_path / "skills.jsonl", tmp_path / "other.jsonl"
    _write(catalog, RECORDS[:3])
    _write(other, RECORDS[3:])
    _serve(project, other, start)
    mine = catalog_file(project, str(other))
    os.utime(mine, (start - 60 * day, start - 60 * day))   # the cache's own, unused since
    _serve(project, catalog, start)
    assert theirs.exists() and np.load(theirs)["weights"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not mine.exists()


def test_the_parser_fingerprint_is_computed_on_first_use_not_at_import() -> None:
    """Hashing the code is not paid by an import that never reads the cache; the value computed
    on first use (by two threads at once, and in a child forked meanwhile) is the one
    ``parser_id()`` gives."""
    got = first_use_in_a_fresh_process("catalog_store", "parser_fingerprint",
                                       "s.parser_id()")
    assert got == "0 True 0\n"



def test_a_child_forked_while_a_thread_held_its_lock_reads_it(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A refresh on the warm-up thread inside the catalog lines' cache's lock when a server
    forked its workers: the worker's first refresh waited on it for ever."""
    from hermes_core.retrieval.catalog_store import CatalogCache

    cache = CatalogCache(tmp_path)
    expected = cache.recall("catalog", [])
    with held_by_a_thread(cache._lock):
        assert in_forked_child(lambda: cache.recall("catalog", [])) == expected
def test_a_restarted_retriever_parses_only_the_catalog_line_edited_since(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What each JSONL line parsed to is saved in the cache folder: a new process's first read
    parses the edited line alone (not the catalog whole), reads the same skills, paths and
    content hashes as a read from scratch, and answers as a retriever built from scratch."""
    from hermes_core.retrieval import skills as skills_mod

    path = tmp_path / "catalog.jsonl"
    skills = {s.name: s.description for s in SAMPLE_SKILLS}
    skills.update({f"tool-{i}": f"Handles task number {i} for the billing team." for i in range(80)})
    write_catalog(path, skills)
    SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "c").refresh()
    skills["tool-7"] += " It also reads archived invoices."
    write_catalog(path, skills)
    parsed: list[bytes] = []
    real = skills_mod._parse_line

    def counted(line: bytes, where: str) -> Any:
        if line.strip():   # (the blank line after the last is no record)
            parsed.append(line)
        return real(line, where)

    monkeypatch.setattr(skills_mod, "_parse_line", counted)
    restarted = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "c")
    restarted.refresh()
    assert len(parsed) == 1 and b"archived invoices" in parsed[0], parsed
    fresh = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "f")
    fresh.refresh()
    a, b = restarted.index.ordered(), fresh.index.ordered()
    assert a == b and [s.path for s in a] == [s.path for s in b]
    assert [s.content_hash for s in a] == [s.content_hash for s in b]
    for q in ["archived invoices", "查询交通违章", "book a flight", "task number 12"]:
        x, y = restarted.retrieve(q), fresh.retrieve(q)
        assert (x.names, x.scores, x.gated) == (y.names, y.scores, y.gated)
