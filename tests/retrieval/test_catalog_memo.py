"""Tests of ``hermes_core/retrieval/catalog_memo.py``: a JSONL catalog read with the memo of the
last read parses only what changed, and gives the skills, paths, issues and warnings of a read
without it (the warnings once per change)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import skills as skills_mod
from hermes_core.retrieval.catalog_memo import CatalogMemo
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.skills import MAX_DESCRIPTION, load_catalog, load_jsonl_catalog
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from tests.retrieval.conftest import write_catalog

LONG = "Read the forecast. " * 60          # over MAX_DESCRIPTION: kept with a warning
LONG_NAME = "Vendor.Tools." + "x" * 70      # over 64: kept in a catalog, with a warning


def record(name: str, description: str, **extra: object) -> bytes:
    return json.dumps({"name": name, "description": description, **extra}).encode("utf-8")


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


def file_lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def warnings(caplog: pytest.LogCaptureFixture, read: Callable[[], object]) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.skills"):
        read()
    return [r.getMessage() for r in caplog.records]


def warned_line(message: str, path: Path) -> int:
    return int(message.removeprefix(f"{path}:").split(":", 1)[0])


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every line the loader parses (validates), in order."""
    seen: list[bytes] = []
    real = skills_mod._parse_line

    def counted(line: bytes, where: str) -> object:
        seen.append(line)
        return real(line, where)
    monkeypatch.setattr(skills_mod, "_parse_line", counted)
    return seen


def test_a_second_read_parses_only_the_lines_that_changed_and_places_every_skill_anew(
        tmp_path: Path, parses: list[bytes]) -> None:
    path = tmp_path / "catalog.jsonl"
    lines = [record(f"skill-{i}", f"Does thing number {i}") for i in range(50)]
    write_lines(path, lines)
    memo = CatalogMemo()
    first, _ = load_jsonl_catalog(path, memo)
    assert len(parses) == 51                       # every line, and the empty one after the last
    parses.clear()
    assert load_jsonl_catalog(path, memo)[0] == first and parses == []
    assert all(a is b for a, b in zip(load_jsonl_catalog(path, memo)[0], first, strict=True))
    edited = record("skill-20", "Does thing number 20, and archives it")
    added = record("brand-new", "Scans a paper receipt")
    write_lines(path, [added, *lines[:20], edited, *lines[21:45]])     # and five deleted
    skills, issues = load_jsonl_catalog(path, memo)
    assert parses == [added, edited]
    assert (skills, issues) == load_jsonl_catalog(path)
    assert [s.path for s in skills] == [f"{path}:{n}" for n in range(1, 47)]


def test_warnings_are_logged_once_per_change_in_the_words_of_a_fresh_read(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "catalog.jsonl"
    long_line = record("forecast", LONG)
    write_lines(path, [record("a", "short"), long_line, record(LONG_NAME, "dotted id")])
    memo = CatalogMemo()
    fresh = warnings(caplog, lambda: load_jsonl_catalog(path))
    assert fresh == [f"{path}:2: 'description' is {len(LONG.strip())} characters (limit "
                     f"{MAX_DESCRIPTION}); kept (clipped in hints)",
                     f"{path}:3: 'name' is {len(LONG_NAME)} characters (limit 64); kept"]
    assert warnings(caplog, lambda: load_jsonl_catalog(path, memo)) == fresh   # its first read
    assert warnings(caplog, lambda: load_jsonl_catalog(path, memo)) == []      # nothing changed
    write_lines(path, [record("a", "short, edited"), long_line, record(LONG_NAME, "dotted id")])
    assert warnings(caplog, lambda: load_jsonl_catalog(path, memo)) == []      # not their lines
    write_lines(path, [record("new", "added above"), record("a", "short"), long_line,
                       record(LONG_NAME, "dotted id")])
    # both moved: what a fresh read says now names their new lines
    moved = warnings(caplog, lambda: load_jsonl_catalog(path, memo))
    assert moved == warnings(caplog, lambda: load_jsonl_catalog(path)) and "catalog.jsonl:3:" in moved[0]
    write_lines(path, [record("new", "added above"), record("a", "short"), record("forecast", LONG + "x"),
                       record(LONG_NAME, "dotted id")])
    assert [warned_line(m, path) for m in warnings(caplog, lambda: load_jsonl_catalog(path, memo))] == [3]


def test_a_refused_records_warnings_are_logged_as_a_fresh_read_logs_them(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "catalog.jsonl"
    write_lines(path, [record("bad", LONG, category=3)])   # warned about, then refused
    memo = CatalogMemo()
    fresh = warnings(caplog, lambda: load_jsonl_catalog(path))
    assert len(fresh) == 1 and "'description' is" in fresh[0]
    assert warnings(caplog, lambda: load_jsonl_catalog(path, memo)) == fresh
    assert load_jsonl_catalog(path, memo) == load_jsonl_catalog(path) == (
        [], [skills_mod.CatalogIssue(str(path), "'category' must be a string", 1)])


def test_a_torn_line_mid_edit_is_skipped_naming_file_and_line_then_read_once_whole(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "catalog.jsonl"
    whole = record("receipt-scanner", "Scan a paper receipt and file it")
    write_lines(path, [record("a", "first")])
    memo = CatalogMemo()
    load_catalog(catalogs=[path], memo=memo)
    path.write_bytes(record("a", "first") + b"\n" + whole[: len(whole) // 2])   # half written
    said = warnings(caplog, lambda: load_catalog(catalogs=[path], memo=memo))
    assert said == [f"skipping skill: {path}:2: not valid JSON (Unterminated string starting at)"]
    assert [s.name for s in load_catalog(catalogs=[path], memo=memo).skills] == ["a"]
    write_lines(path, [record("a", "first"), whole])
    cat = load_catalog(catalogs=[path], memo=memo)
    assert [(s.name, s.path) for s in cat.skills] == [("a", f"{path}:1"), ("receipt-scanner", f"{path}:2")]
    assert cat.issues == ()


def test_a_catalog_that_vanishes_and_comes_back_is_read_as_new(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "catalog.jsonl"
    write_lines(path, [record("forecast", LONG)])
    memo = CatalogMemo()
    load_jsonl_catalog(path, memo)
    path.rename(tmp_path / "aside")
    assert load_jsonl_catalog(path, memo)[0] == []
    (tmp_path / "aside").rename(path)
    assert len(warnings(caplog, lambda: load_jsonl_catalog(path, memo))) == 1


# Lines a catalog may hold: good records, long ones (warned about), refused ones, broken JSON,
# invalid UTF-8 and blanks; a step edits, adds, deletes, moves, tears or copies one line.
POOL = [record(f"skill-{i}", f"Does thing number {i} for the user") for i in range(8)] + [
    record("forecast", LONG), record(LONG_NAME, "dotted id"), record("bad", LONG, category=3),
    b"{not json", b"\xff\xfe not utf-8", b"", b"   ", record("skill-1", "a duplicate name"),
    record("tags", "Tagged", tags=["a", 2]), record("crlf", "Windows line") + b"\r"]

step = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 40), st.sampled_from(POOL)),
    st.tuples(st.just("add"), st.integers(0, 40), st.sampled_from(POOL)),
    st.tuples(st.just("delete"), st.integers(0, 40), st.just(b"")),
    st.tuples(st.just("move"), st.integers(0, 40), st.integers(0, 40)),
    st.tuples(st.just("tear"), st.integers(0, 40), st.integers(1, 30)),
    st.tuples(st.just("reverse"), st.just(0), st.just(b"")),
)


def apply(lines: list[bytes], op: tuple[str, int, object]) -> list[bytes]:
    kind, at, arg = op
    out = list(lines)
    i = at % (len(out) + (kind == "add")) if out or kind == "add" else 0
    if kind == "add":
        assert isinstance(arg, bytes)
        out.insert(i, arg)
    elif not out:
        return out
    elif kind == "edit":
        assert isinstance(arg, bytes)
        out[i] = arg
    elif kind == "delete":
        del out[i]
    elif kind == "move":
        assert isinstance(arg, int)
        out.insert(arg % len(out), out.pop(i))
    elif kind == "tear":
        assert isinstance(arg, int)
        out[i] = out[i][: max(len(out[i]) - arg, 0)]
    else:
        out.reverse()
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.lists(st.sampled_from(POOL), max_size=12), steps=st.lists(step, min_size=1, max_size=8))
def test_reads_through_any_changes_equal_a_fresh_read_and_warn_once_per_change(
        tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture,
        start: list[bytes], steps: list[tuple[str, int, object]]) -> None:
    path = tmp_path_factory.mktemp("memo") / "catalog.jsonl"
    memo = CatalogMemo()
    lines, before = start, list[bytes]()
    for op in [("reverse", 0, b""), *steps]:   # the first read is of `start` reversed
        lines = apply(lines, op)
        write_lines(path, lines)
        now = file_lines(path)
        kept: list[tuple[list[object], list[object]]] = []
        said = warnings(caplog, lambda: kept.append(load_jsonl_catalog(path, memo)))  # noqa: B023
        fresh_said = warnings(caplog, lambda: kept.append(load_jsonl_catalog(path)))  # noqa: B023
        (skills, issues), (fresh_skills, fresh_issues) = kept
        assert issues == fresh_issues
        assert [(s, s.path, s.content_hash) for s in skills] == [
            (s, s.path, s.content_hash) for s in fresh_skills]      # type: ignore[attr-defined]
        changed = {n for n, line in enumerate(now, start=1)
                   if n > len(before) or before[n - 1] != line}
        assert said == [m for m in fresh_said if warned_line(m, path) in changed]
        before = now



def test_a_child_forked_while_a_thread_held_its_lock_reads_it(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A refresh on the warm-up thread inside the catalog memo's lock when a server forked its workers:
    the worker's first refresh waited on it for ever."""
    from hermes_core.retrieval.catalog_memo import CatalogMemo

    cache = CatalogMemo()
    expected = cache.reads()
    with held_by_a_thread(cache.lock):
        assert in_forked_child(lambda: cache.reads()) == expected
def test_skills_below_a_line_added_to_a_jsonl_catalog_name_their_new_line(tmp_path: Path) -> None:
    path = tmp_path / "catalog.jsonl"
    skills = {s.name: s.description for s in SAMPLE_SKILLS[:4]}
    write_catalog(path, skills)
    r = SkillRetriever(catalogs=[path])
    r.refresh(dense=False)
    write_catalog(path, {"receipt-scanner": "Scan a paper receipt", **skills})
    r.refresh(dense=False)
    fresh = SkillRetriever(catalogs=[path])
    assert sorted((s.name, s.path) for s in r.skills) == sorted((s.name, s.path) for s in fresh.skills)


JSONL_POOL = [(s.name, s.description) for s in SAMPLE_SKILLS] + [
    ("receipt-scanner", "Scan a paper receipt and file it as an expense"),
    ("invoice-pdf", "Extract the tables of an invoice PDF"),
    ("flight-booking", "Book a flight to a city on a date"),
    ("long-forecast", "Forecast the weather for a whole month ahead. " * 30),   # warned about
    ("weather-forecast", "Get the weather, now also for the coast"),            # an edit of one
]


@settings(max_examples=6, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["edit", "add", "delete", "reorder"]),
                                st.integers(0, 20), st.sampled_from(JSONL_POOL)),
                      min_size=1, max_size=4))
def test_a_jsonl_catalog_read_through_any_changes_serves_ranks_and_gates_as_a_fresh_process(
        tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, tuple[str, str]]]) -> None:
    from hermes_core.retrieval import bm25 as bm25_mod

    tmp = tmp_path_factory.mktemp("jsonl")
    path = tmp / "catalog.jsonl"
    lines = [json.dumps({"name": n, "description": d}) for n, d in JSONL_POOL[:6]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kept = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp / "kept")
    kept.refresh()
    queries = ["extract tables from an invoice", "scan my receipt", "查询交通违章", "monthly forecast"]
    warm = bm25_mod._MEMO
    try:
        _change_and_compare(kept, path, lines, steps, queries, tmp)
    finally:
        bm25_mod._MEMO = warm


def _same_report(a: object, b: object) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same_report(a[k], b[k])
    else:
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12)


def _change_and_compare(kept: SkillRetriever, path: Path, lines: list[str],
                        steps: list[tuple[str, int, tuple[str, str]]], queries: list[str],
                        tmp: Path) -> None:
    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval.token_memo import TokenMemo

    for n, (op, at, (name, text)) in enumerate(steps):
        line = json.dumps({"name": name, "description": text})
        i = at % max(len(lines), 1)
        if op == "add":
            lines.insert(at % (len(lines) + 1), line)
        elif op == "edit" and lines:
            lines[i] = line
        elif op == "delete" and lines:
            del lines[i]
        elif op == "reorder":
            lines = lines[i:] + lines[:i]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        kept.refresh()
        bm25_mod._MEMO = TokenMemo()   # the fresh process remembers no tokens (restored below)
        fresh = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp / f"fresh-{n}")
        fresh.refresh()
        assert [(s, s.path) for s in kept.skills] == [(s, s.path) for s in fresh.skills]
        assert kept.issues == fresh.issues
        assert (kept._lexical_cal is None) == (fresh._lexical_cal is None)
        if kept._lexical_cal is not None and fresh._lexical_cal is not None:
            assert kept._lexical_cal.threshold == fresh._lexical_cal.threshold
            assert kept._lexical_cal.report == fresh._lexical_cal.report
        _same_report(kept.calibration_report(), fresh.calibration_report())
        for q in queries:
            a, b = kept.retrieve(q), fresh.retrieve(q)
            assert (a.names, a.candidates, a.gated) == (b.names, b.candidates, b.gated)
            assert a.scores == pytest.approx(b.scores, rel=1e-12, abs=1e-12)
