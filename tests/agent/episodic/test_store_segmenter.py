"""Tests of ``hermes_core/agent/episodic/store.py``: the segmenter an archive was indexed with.

A store records which segmenter (tokenizer, Chinese folding, emoji data) cut its index and
re-indexes the archive once when that changes, and never when only something the index does not
read changed; text in either Chinese script or with or without a variation selector finds the
other, and runs of punctuation and emoji sequences are searched whole. (The rest of the store's
tests are in ``test_store.py`` and ``test_store_search.py``.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hermes_core import emoji_groups
from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import passages, ranking
from hermes_core.agent.episodic.store import SessionStore
from hermes_core.emoji_groups import toned_forms
from hermes_core.tokenize import SEGMENT_VERSION, emoji_release, segment_key, symbol_terms, tokenizer_key
from tests.agent.episodic.conftest import NOW, NOW_TOKENIZER_UPGRADE, TEXT, old_segment, rec, v1_database


def test_opening_an_old_database_reindexes_it_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    v1_database(path, monkeypatch)
    with SessionStore(path) as store:
        assert store.reindexed == 1
        assert [h.session_id for h in store.search("开会", 5)] == ["s-old"]
        assert store.connection.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (
            f"hermes-tokenize-{tokenizer_key()}.{segment_key()}{passages.LAYOUT}",)
        assert store.stats()["index_in_sync"]
    with SessionStore(path) as again:          # recorded: nothing to do the second time
        assert again.reindexed == 0
    with ContextEngine(path, clock=lambda: NOW_TOKENIZER_UPGRADE) as engine:
        assert [m.session_id for m in engine.retrieve("John 开会")] == ["s-old"]


def test_a_store_with_a_custom_segmenter_never_rebuilds(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path, segment=old_segment) as store:
        from hermes_core.agent.episodic.store import SessionRecord
        store.upsert(SessionRecord("s1", TEXT, (), NOW_TOKENIZER_UPGRADE))
        assert store.reindexed == 0
    with SessionStore(path, segment=old_segment) as again:
        assert again.reindexed == 0
    with SessionStore(path, segment=old_segment, segment_id="mine-1") as named:
        assert named.reindexed == 1                      # a named segmenter is compared
    with SessionStore(path, segment=old_segment, segment_id="mine-1") as named_again:
        assert named_again.reindexed == 0


HAN_SESSIONS = [("s-simplified", "排查了生产环境的数据库连接错误，原因是连接池耗尽"),
                ("s-traditional", "在會議室討論了颱風天的出差安排"),
                ("s-other", "deploy the billing service")]


@pytest.mark.parametrize(("query", "gold"), [
    ("數據庫連接錯誤", "s-simplified"),        # a Taiwan / Hong Kong user, a mainland summary
    ("数据库连接错误", "s-simplified"),
    ("台风天出差", "s-traditional"),           # and the reverse (颱風 folds to 台风)
    ("上次 database 連接池 的问题", "s-simplified"),
])
def test_a_query_in_either_chinese_script_recalls_a_session_written_in_the_other(
        tmp_path: Path, query: str, gold: str) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        for sid, text in HAN_SESSIONS:
            engine.add(sid, text, created_at=NOW)
        found = engine.retrieve(query)
        assert [m.session_id for m in found][:1] == [gold]
        assert found[0].summary == dict(HAN_SESSIONS)[gold]     # shown as it was written


def _segment_before_folding(text: str) -> str:
    """How tokenizer 3 indexed Chinese: jieba over the characters as written."""
    import jieba
    return " ".join(w for w in jieba.cut_for_search(text.lower()) if w.strip())


def test_an_archive_indexed_before_chinese_folding_is_re_indexed_once_and_then_found(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    before = f"hermes-tokenize-3.{SEGMENT_VERSION}{passages.LAYOUT}"
    text = dict(HAN_SESSIONS)["s-traditional"]
    with SessionStore(path, segment=_segment_before_folding, segment_id=before) as old:
        old.upsert(rec("s-traditional", text))
        assert old.search('"台风"', 5) == []          # the old index holds 颱風 only
    with SessionStore(path) as store:
        assert store.reindexed == 1
        assert [h.session_id for h in store.search('"台风"', 5)] == ["s-traditional"]
        got = store.get("s-traditional")
        assert got is not None and got.summary == text      # the stored text is not folded
    with ContextEngine(path, clock=lambda: NOW) as engine:
        assert [m.session_id for m in engine.retrieve("颱風 出差")] == ["s-traditional"]


def _segment_before_emoji_bases(text: str) -> str:
    """How segment version 4 indexed an emoji: its cluster's term only (no keycap, no base)."""
    from hermes_core.tokenize import symbol_terms, tokenize
    return " ".join([*tokenize(text, keep_whole=True), *symbol_terms(text.replace("\u20e3", " "))])


@contextmanager
def _re_indexed_once(tmp_path: Path, segment: Callable[[str], str], version: int,
                     texts: dict[str, str],
                     as_old: Callable[[SessionStore], None] = lambda old: None,
                     digest: str | None = None) -> Iterator[ContextEngine]:
    """An archive segment version ``version`` indexed (``texts`` by session id, ``as_old``
    checked on it) is re-indexed once by the next store, every text, and then not again; what
    the block checks is read through an engine between the two. ``digest``: the emoji data
    digest it was indexed under, recorded under the installed release as a store records it,
    so the next store takes it from the file (only the version tells the two indexes apart)."""
    path = tmp_path / "sessions.db"
    emoji_key = f"+emoji-{digest}" if digest else ""
    before = f"hermes-tokenize-{tokenizer_key()}.{version}{emoji_key}{passages.LAYOUT}"
    with SessionStore(path, segment=segment, segment_id=before) as old:
        for session_id, text in texts.items():
            old.upsert(rec(session_id, text))
        as_old(old)
        if digest:
            old.connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES "
                                   "('emoji_data', ?)", (f"{emoji_release()} {digest}",))
    with SessionStore(path) as store:
        assert store.reindexed == len(texts)
    with ContextEngine(path, clock=lambda: NOW) as engine:
        yield engine
    with SessionStore(path) as again:
        assert again.reindexed == 0


def test_an_archive_indexed_before_emoji_bases_and_keycaps_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"toned": "the review got a 👍🏽 from ops", "cap": "step 1\ufe0f\u20e3 restart the deploy"}
    with _re_indexed_once(tmp_path, _segment_before_emoji_bases, 4, texts) as engine:
        assert [m.session_id for m in engine.retrieve("👍")] == ["toned"]
        assert [m.session_id for m in engine.retrieve("1\ufe0f\u20e3")] == ["cap"]


def _segment_before_objects_and_tag_bases(text: str) -> str:
    """How segment version 5 indexed: a toned emoji's bases, but no profession's object and no
    subdivision flag's 🏴."""
    from hermes_core.tokenize import symbol_terms, tokenize
    return " ".join([*tokenize(text, keep_whole=True), *symbol_terms(text)])


def _found_as_5_had_it(old: SessionStore) -> None:
    assert [h.session_id for h in old.search("zsym1f4bb", 5)] == ["laptop"]


def test_an_archive_indexed_before_profession_objects_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"coder": "pairing with the 👩\u200d💻 on the parser", "laptop": "bought a 💻 for ops"}
    with _re_indexed_once(tmp_path, _segment_before_objects_and_tag_bases, 5, texts,
                          as_old=_found_as_5_had_it) as engine:
        assert {m.session_id for m in engine.retrieve("💻")} == {"coder", "laptop"}
        assert [m.session_id for m in engine.retrieve("👩\u200d💻")] == ["coder"]


#: How segment version 6 indexed a ZWJ sequence with no person (one term, no parts): as 5 read a
#: text without bases.
_segment_before_zwj_parts = _segment_before_objects_and_tag_bases


def test_an_archive_indexed_before_zwj_parts_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"polar": "部署🐻\u200d❄\ufe0f完成 at the zoo", "snow": "the ❄ storm closed the road"}
    with _re_indexed_once(tmp_path, _segment_before_zwj_parts, 6, texts) as engine:
        assert {m.session_id for m in engine.retrieve("❄")} == {"polar", "snow"}
        assert [m.session_id for m in engine.retrieve("🐻\u200d❄\ufe0f")] == ["polar"]


def _segment_before_group_parts(text: str) -> str:
    """How segment version 7 indexed: a listed sequence's parts, but none for a group of people
    or a flag (the parts table without them)."""
    from hermes_core import tokenize as tok

    table = {k: v for k, v in tok._listed_parts().items()
             if k[0] not in "\U0001F3F3\U0001F3F4" and not any(p in tok._PEOPLE for p in k.split("\u200d"))}
    real = tok._listed_parts
    tok._listed_parts = lambda: table  # type: ignore[assignment]
    try:
        return tok.segment_for_index(text)
    finally:
        tok._listed_parts = real


def test_an_archive_indexed_before_group_and_flag_parts_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"family": "dinner 👨\u200d👩\u200d👧 on sunday", "pride": "a 🏳\ufe0f\u200d🌈 on the door"}

    def as_old(old: SessionStore) -> None:
        assert old.search(ranking.match_term(symbol_terms("👩")[0]), 5) == []

    with _re_indexed_once(tmp_path, _segment_before_group_parts, 7, texts, as_old=as_old) as engine:
        assert [m.session_id for m in engine.retrieve("👩")] == ["family"]
        assert [m.session_id for m in engine.retrieve("🌈")] == ["pride"]


def _table_without_forms(strip: Callable[[str], bool]) -> dict[str, tuple[str, ...]]:
    """The parts table as it was before the toned-only sequences whose emoji ``strip`` says
    had one: that emoji without their parts, and they without it (nor its gender-less group)."""
    import emoji

    from hermes_core import tokenize as tok

    forms = {k: v for k, v in toned_forms(emoji.EMOJI_DATA).items() if strip(v)}
    gone = {k: {v, tok._GENDER_HAIR.sub("", v)} for k, v in forms.items()}
    return {k: tuple(p for p in v if p not in gone.get(k, ()))
            for k, v in _table_before_listed_forms().items() if k not in set(forms.values())}


def _digest_under(monkeypatch: pytest.MonkeyPatch, table: dict[str, tuple[str, ...]]) -> str:
    """The emoji data digest an older release's parts ``table`` gave, checked to differ from
    today's (else the re-index under test would have nothing to re-key)."""
    from hermes_core import tokenize as tok

    with monkeypatch.context() as before:
        before.setattr(tok, "_listed_parts", lambda: table)
        tok.emoji_data_digest.cache_clear()
        digest = tok.emoji_data_digest()
    tok.emoji_data_digest.cache_clear()
    assert digest != tok.emoji_data_digest()
    return digest


def _table_before_listed_forms() -> dict[str, tuple[str, ...]]:
    """The parts table of segment version 11: no group of one code point had its listed
    gendered forms' people (👪 none), nor they it."""
    import emoji

    real = emoji_groups.listed_forms
    emoji_groups.listed_forms = lambda data: {}  # type: ignore[assignment]
    try:
        return emoji_groups.parts_table(emoji.EMOJI_DATA)
    finally:
        emoji_groups.listed_forms = real


def _table_before_single_groups() -> dict[str, tuple[str, ...]]:
    """The parts table of segment version 9: no group of one code point (👬) had parts, and no
    sequence listed only toned (👨🏻‍🤝‍👨🏿) had its one code point (nor a gendered group's)."""
    return _table_without_forms(lambda single: True)


def _table_before_gendered_groups() -> dict[str, tuple[str, ...]]:
    """The parts table of segment version 10: a gender variant's group (👯‍♂) had no parts, and
    its mixed-tone sequence (👨🏻‍🐰‍👨🏿) neither it nor 👯."""
    return _table_without_forms(lambda single: "\u200d" in single)


def _segment_before_single_groups(text: str) -> str:
    """How segment version 9 indexed: :func:`_table_before_single_groups`, and an emoji Unicode
    files as a math sign or punctuation (↔) was a lone mark in a text with words, no term."""
    import regex

    from hermes_core import tokenize as tok

    table = _table_before_single_groups()
    real = tok._listed_parts
    tok._listed_parts = lambda: table  # type: ignore[assignment]
    try:
        return tok.segment_for_index(regex.sub(r"(?V1)[\p{Extended_Pictographic}--\p{So}]", " ", text))
    finally:
        tok._listed_parts = real


def test_an_archive_indexed_before_single_groups_and_pictographs_is_re_indexed_once_and_then_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store records the emoji data's digest under the installed release and takes it from the
    file on open: under the same release, an archive indexed by segment version 9 (👬 without
    parts, ↔ no term) read as up to date, and 👨 never found its 👬. The version re-keys it."""
    texts = {"pair": "two 👬 at the gate", "swap": "sync \u2194\ufe0f backup nightly"}

    def as_old(old: SessionStore) -> None:
        for symbol in ("👨", "\u2194"):
            assert old.search(ranking.match_term(symbol_terms(symbol)[0]), 5) == []

    table = _table_before_single_groups()
    digest = _digest_under(monkeypatch, table)
    with _re_indexed_once(tmp_path, _segment_before_single_groups, 9, texts, as_old=as_old,
                          digest=digest) as engine:
        assert [m.session_id for m in engine.retrieve("👨")] == ["pair"]
        assert [m.session_id for m in engine.retrieve("\u2194")] == ["swap"]


def test_an_archive_indexed_before_gendered_groups_is_re_indexed_once_and_then_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segment version 10's table gave 👯‍♂️ (men with bunny ears) no 👨 and its two-tone form
    no 👯‍♂️: an archive it indexed, its digest recorded under the installed release, read as up
    to date under the table that has them. The version re-keys it."""
    pair = "👨\U0001F3FB\u200d🐰\u200d👨\U0001F3FF"
    texts = {"party": "two 👯\u200d\u2642\ufe0f at the door", "mixed": f"a {pair} photo"}

    from hermes_core import tokenize as tok

    table = _table_before_gendered_groups()

    def segment(text: str) -> str:
        with monkeypatch.context() as before:
            before.setattr(tok, "_listed_parts", lambda: table)
            return tok.segment_for_index(text)

    def as_old(old: SessionStore) -> None:       # each found by one half of the group only
        for symbol, found in (("👨", {"mixed"}), ("👯", {"party"})):
            hits = old.search(ranking.match_term(symbol_terms(symbol)[0]), 5)
            assert {h.session_id for h in hits} == found, symbol

    digest = _digest_under(monkeypatch, table)
    with _re_indexed_once(tmp_path, segment, 10, texts, as_old=as_old, digest=digest) as engine:
        assert {m.session_id for m in engine.retrieve("👨")} == {"party", "mixed"}
        assert {m.session_id for m in engine.retrieve("👯")} == {"party", "mixed"}


def test_an_archive_indexed_before_families_and_letter_emoji_is_re_indexed_once_and_then_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segment version 11 gave 👪 (family) no people and ℹ️ no term (NFKC's i, a stopword): an
    archive it indexed, its digest recorded under the installed release, read as up to date
    under the table that has them. The version re-keys it."""
    texts = {"family": "dinner 👪 on sunday", "info": "the \u2139\ufe0f panel moved"}

    from hermes_core import tokenize as tok

    table = _table_before_listed_forms()

    def segment(text: str) -> str:
        with monkeypatch.context() as old:
            old.setattr(tok, "_listed_parts", lambda: table)
            old.setattr(tok, "_letter_emoji", lambda text: [])
            return tok.segment_for_index(text)

    def as_old(old: SessionStore) -> None:
        for symbol in ("👨", "\u2139"):
            assert old.search(ranking.match_term(symbol_terms(symbol)[0]), 5) == [], symbol

    digest = _digest_under(monkeypatch, table)
    with _re_indexed_once(tmp_path, segment, 11, texts, as_old=as_old, digest=digest) as engine:
        assert [m.session_id for m in engine.retrieve("👨")] == ["family"]
        assert [m.session_id for m in engine.retrieve("\u2139\ufe0f")] == ["info"]
        assert [m.session_id for m in engine.retrieve("\u24c2")] == []


BEAR_ON_FIRE = "🐻\u200d🔥"    # no sequence Unicode lists: a later release may


def test_an_emoji_release_that_changes_no_data_the_index_reads_re_indexes_nothing(
        tmp_path: Path, emoji_released: Callable[..., None]) -> None:
    """The index was keyed by the ``emoji`` package's release: any release (2.14.0 and 2.16.0
    list the same ZWJ sequences) re-indexed a whole archive. It is keyed by a digest of what the
    segmenter reads from the data; the release it was read under is recorded beside it."""
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.upsert(rec("polar", "the 🐻\u200d❄\ufe0f at the zoo"))
    emoji_released("99.0.0")
    with SessionStore(path) as later:
        assert later.reindexed == 0
        assert later.connection.execute(
            "SELECT value FROM meta WHERE key = 'emoji_data'").fetchone()[0].startswith("99.0.0 ")
        assert [h.session_id for h in later.search(ranking.match_term(
            symbol_terms("❄")[0]), 5)] == ["polar"]
    with SessionStore(path, read_only=True) as preview:    # named as a writable store names it
        assert preview.segment_id == later.segment_id


def test_an_emoji_release_listing_a_new_sequence_re_indexes_the_archive_once(
        tmp_path: Path, emoji_released: Callable[..., None]) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.upsert(rec("mascot", f"the {BEAR_ON_FIRE} mascot"))
        store.upsert(rec("drill", "a 🔥 drill at noon"))
    emoji_released("99.0.0", **{BEAR_ON_FIRE: {"en": ":bear_on_fire:", "status": 2, "E": 99}})
    with SessionStore(path) as later:
        assert later.reindexed == 2
    with ContextEngine(path, clock=lambda: NOW) as engine:
        assert {m.session_id for m in engine.retrieve("🔥")} == {"mascot", "drill"}
    with SessionStore(path) as again:
        assert again.reindexed == 0


def _emoji_unreadable(monkeypatch: pytest.MonkeyPatch, release: str) -> None:
    """This process reads no emoji data (the package missing, or failing to import) though its
    release reads as ``release`` (``-``: no metadata, as a bundled app that carries the package)."""
    from hermes_core import tokenize as tok

    monkeypatch.setattr(tok, "emoji_release", lambda: release)
    monkeypatch.setattr(tok, "_listed_parts", lambda: {})
    tok.emoji_data_digest.cache_clear()


@pytest.mark.parametrize("release", ["-", "99.0.0"])
def test_a_digest_read_from_no_emoji_data_is_not_remembered_to_skip_a_later_re_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, emoji_released: Callable[..., None],
        release: str) -> None:
    """A process that read no emoji data recorded the empty table's digest under its release
    (``-`` for every process without the package's metadata): a later process under that release
    that reads the data took that digest from the file, named the index as built with the parts,
    and did not re-index it: 👩 did not find the family indexed without them."""
    path = tmp_path / "sessions.db"
    emoji_released(release)
    with monkeypatch.context() as unreadable:
        _emoji_unreadable(unreadable, release)
        with SessionStore(path) as store:
            store.upsert(rec("family", "dinner 👨\u200d👩\u200d👧 on sunday"))
    emoji_released(release)                       # the data read again, under the same release
    with SessionStore(path) as later:
        assert later.reindexed == 1
    with ContextEngine(path, clock=lambda: NOW) as engine:
        assert [m.session_id for m in engine.retrieve("👩")] == ["family"]


def test_a_store_whose_emoji_data_is_recorded_opens_without_importing_emoji(tmp_path: Path) -> None:
    """Reading the digest imports ``emoji`` (90-190 ms); an open under the release the store
    recorded reads the digest from the file instead."""
    path = tmp_path / "sessions.db"
    SessionStore(path).close()
    code = (f"import sys\nfrom hermes_core.agent.episodic.store import SessionStore\n"
            f"SessionStore({str(path)!r}).close()\nprint('emoji' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_an_archive_indexed_before_an_opencc_or_jieba_upgrade_is_re_indexed_once(
        tmp_path: Path, tokenizer_upgraded: Callable[[], None]) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        for sid, text in HAN_SESSIONS:
            store.upsert(rec(sid, text))
    with SessionStore(path) as same:
        assert same.reindexed == 0                 # the same libraries: the index is reused
    tokenizer_upgraded()
    with SessionStore(path) as upgraded:
        assert upgraded.reindexed == len(HAN_SESSIONS)
        assert [h.session_id for h in upgraded.search('"台风"', 5)] == ["s-traditional"]
    with SessionStore(path) as again:
        assert again.reindexed == 0


def _text_default_emoji() -> list[str]:
    """Every emoji the ``emoji`` data lists as one code point and its emoji presentation selector
    (❤️, 🅿️, ↔️): shown as text without it, so both spellings are typed."""
    import emoji

    return sorted(k[0] for k in emoji.EMOJI_DATA if len(k) == 2 and k[1] == "\ufe0f")


def test_a_chinese_name_with_a_variation_selector_and_its_plain_form_find_each_other(
        tmp_path: Path) -> None:
    """A name written with an ideographic variation selector (葛󠄀城: the family's own glyph of
    葛) is the name: each spelling finds a memory of the other, and no other name's."""
    names = [("葛\U000E0100城", "葛城"), ("王\ufe00小明", "王小明"), ("辻\U000E0100本", "辻本"),
             ("张\U000E0100伟", "张伟")]
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        for i, (written, plain) in enumerate(names):
            engine.add(f"ivs-{i}", f"和{written}开会讨论预算", created_at=NOW)
            engine.add(f"plain-{i}", f"和{plain}开会讨论预算", created_at=NOW)
        engine.add("other", "和李娜开会讨论预算", created_at=NOW)
        for i, (written, plain) in enumerate(names):
            both = {f"ivs-{i}", f"plain-{i}"}
            for query in (written, plain):
                found = [m.session_id for m in engine.retrieve(query, max_results=20)]
                assert set(found[:2]) == both, (query, found)


def test_an_emoji_with_or_without_its_presentation_selector_finds_the_other_through_the_store(
        tmp_path: Path) -> None:
    """A memory holding ❤ is found by ❤️ and ❤︎ and the reverse, for each of the data's 207: ↔ ◻
    ◼ ⤴ ⤵ 〰 〽 (emoji Unicode files as math signs or punctuation) were indexed in neither form and
    ↔️ searched nothing; ℹ and Ⓜ, the letters i and m after NFKC (stopwords), were found by no
    form. ✔️ is no ✅."""
    symbols = _text_default_emoji()
    assert {"\u2764", "🅿", "\u2194", "\u2714"} <= set(symbols)
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        for i, symbol in enumerate(symbols):
            engine.add(f"text-{i}", f"note {symbol} here", created_at=NOW)
            engine.add(f"emoji-{i}", f"note {symbol}\ufe0f here", created_at=NOW)
        engine.add("check", "tests pass ✅ now", created_at=NOW)
        for i, symbol in enumerate(symbols):
            both = {f"text-{i}", f"emoji-{i}"}
            for query in (symbol, symbol + "\ufe0f", symbol + "\ufe0e"):
                found = {m.session_id for m in engine.retrieve(query, max_results=50)}
                assert both <= found, (query, sorted(found))
        for other in ("\u2714\ufe0f", "\u2714", "\u2611\ufe0f"):      # ✔️ ✔ ☑️: other symbols
            assert "check" not in {m.session_id for m in engine.retrieve(other, max_results=50)}
        assert [m.session_id for m in engine.retrieve("✅")] == ["check"]


def test_punctuation_runs_and_emoji_sequences_are_searched_whole(tmp_path: Path) -> None:
    """ "？？？" found no "why？？？" (punctuation in a text with words was no term), and a
    family emoji was searched as the people it joins: it found a summary of only the man."""
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: 1_800_000_000.0) as engine:
        engine.add("why", "why？？？ the deploy hung again", created_at=1_799_990_000.0)
        engine.add("calm", "the deploy went fine.", created_at=1_799_990_000.0)
        engine.add("family", "dinner plans 👨\u200d👩\u200d👧 on sunday", created_at=1_799_990_000.0)
        engine.add("man", "a photo of 👨 at the desk", created_at=1_799_990_000.0)
        assert [f.session_id for f in engine.retrieve("？？？")] == ["why"]
        assert [f.session_id for f in engine.retrieve("👨\u200d👩\u200d👧")] == ["family"]
        assert {f.session_id for f in engine.retrieve("👨")} == {"man", "family"}   # a member


def test_a_keycap_finds_its_summary_not_every_summary_with_its_digit(tmp_path: Path) -> None:
    """"1️⃣" was searched as "1": it found every summary with a 1 and ranked the keycap's no
    higher. Now its term finds the keycap only; "1" still finds the keycap's summary (its text
    reads "1"), as 👍 finds 👍🏽."""
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: 1_800_000_000.0) as engine:
        engine.add("cap", "step 1\ufe0f\u20e3 restart the deploy", created_at=1_799_990_000.0)
        engine.add("digit", "retry 1 more time", created_at=1_799_990_000.0)
        engine.add("hash", "tag it #\ufe0f\u20e3 infra", created_at=1_799_990_000.0)
        engine.add("two", "step 2\ufe0f\u20e3 check logs", created_at=1_799_990_000.0)
        assert [f.session_id for f in engine.retrieve("1\ufe0f\u20e3")] == ["cap"]
        assert [f.session_id for f in engine.retrieve("1\u20e3")] == ["cap"]
        assert [f.session_id for f in engine.retrieve("#\ufe0f\u20e3")] == ["hash"]
        assert {f.session_id for f in engine.retrieve("1")} == {"cap", "digit"}


def test_a_base_emoji_finds_its_toned_variants_a_toned_one_only_itself(tmp_path: Path) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: 1_800_000_000.0) as engine:
        engine.add("plain", "the review got a 👍 from ops", created_at=1_799_990_000.0)
        engine.add("medium", "the review got a 👍🏽 from ops", created_at=1_799_990_000.0)
        engine.add("dark", "the review got a 👍🏿 from ops", created_at=1_799_990_000.0)
        engine.add("runner", "she is a 🏃\u200d♀\ufe0f now", created_at=1_799_990_000.0)
        engine.add("family", "dinner 👨\u200d👩\u200d👧 on sunday", created_at=1_799_990_000.0)
        assert {f.session_id for f in engine.retrieve("👍")} == {"plain", "medium", "dark"}
        assert [f.session_id for f in engine.retrieve("👍🏽")] == ["medium"]
        assert [f.session_id for f in engine.retrieve("🏃")] == ["runner"]
        assert [f.session_id for f in engine.retrieve("👨")] == ["family"]   # its name says man
        assert [f.session_id for f in engine.retrieve("👨\u200d👩\u200d👧")] == ["family"]


def test_an_emoji_and_its_profession_or_flag_and_a_pasted_long_cluster_are_found(
        tmp_path: Path) -> None:
    """💻 found no 👩‍💻, 🏴 no Scottish flag, and a summary holding 👍 and 100,000 skin tones
    was not found by the same text pasted as the query (the query is cut at ``MAX_QUERY_CHARS``,
    the index kept the whole cluster): both now keep the cluster's first 16 code points."""
    hostile = "👍" + "\U0001F3FD" * 100_000
    scotland = "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: 1_800_000_000.0) as engine:
        engine.add("long", f"we {hostile} met", created_at=1_799_990_000.0)
        engine.add("coder", "the 👩\u200d💻 fixed it", created_at=1_799_990_000.0)
        engine.add("flag", f"go {scotland} team", created_at=1_799_990_000.0)
        assert [f.session_id for f in engine.retrieve(hostile)] == ["long"]
        assert [f.session_id for f in engine.retrieve("💻")] == ["coder"]
        assert [f.session_id for f in engine.retrieve("🏴")] == ["flag"]
        assert [f.session_id for f in engine.retrieve(scotland)] == ["flag"]
        assert [f.session_id for f in engine.retrieve("👩\u200d💻")] == ["coder"]


def test_a_session_of_only_emoji_or_punctuation_is_found_by_its_symbols(tmp_path: Path) -> None:
    """Stored, listed, but found by no query while FTS5 dropped every symbol: a user who saved
    "🚀🚀" and searches 🚀 finds it, "？？？" is found by "???", a word query finds neither."""
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: 1_800_000_000.0) as engine:
        engine.add("rocket", "🚀🚀", created_at=1_799_990_000.0)
        engine.add("ask", "？？？", created_at=1_799_990_000.0)
        engine.add("words", "we launched the rocket 🚀 today", created_at=1_799_990_000.0)
        engine.add("plain", "the launch went fine.", created_at=1_799_990_000.0)
        assert {f.session_id for f in engine.retrieve("🚀")} == {"rocket", "words"}
        assert [f.session_id for f in engine.retrieve("???")] == ["ask"]
        assert [f.session_id for f in engine.retrieve("？")] == ["ask"]
        assert "ask" not in {f.session_id for f in engine.retrieve("what went fine?")}
