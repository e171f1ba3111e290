"""The retriever's query plumbing: one RetrievalQuery, history as a lighter signal, settings in,
and no model loaded where the turn does not need one."""

from __future__ import annotations

import pytest

from hermes_core.agent.skill_tool import SkillSelection
from hermes_core.config import SkillSettings
from hermes_core.retrieval.retriever import SkillRetriever, as_retrieval_query, is_follow_up, ranking_text
from hermes_core.types import Message, RetrievalQuery, Skill

SKILLS = [
    Skill("git-rebase", "Resolve git rebase conflicts and continue the rebase",
          triggers=("rebase conflict",)),
    Skill("sql-tuning", "Speed up a slow SQL query with an index and EXPLAIN"),
    Skill("pdf-extract", "Extract tables and text from a PDF file"),
    Skill("weather-city", "Weather forecast for a city"),
    Skill("weather-sea", "Weather forecast for the sea"),
]


def lexical(**tuning: object) -> SkillRetriever:
    tuning.setdefault("gate_thresholds", {"lexical": 0.0})
    return SkillRetriever(skills=SKILLS, **tuning)  # type: ignore[arg-type]


def test_settings_object_is_the_source_of_tuning_and_keywords_override_it() -> None:
    su = SkillSettings(top_k=2, hint_ratio=0.0, fusion="rrf")
    r = SkillRetriever(su, skills=SKILLS)
    assert (r.top_k, r.fusion, r.hint_ratio) == (2, "rrf", 0.0)
    assert r.settings is su
    r2 = SkillRetriever(su, skills=SKILLS, top_k=3)
    assert r2.top_k == 3 and r2.fusion == "rrf"
    with pytest.raises(TypeError, match="unexpected keyword"):
        SkillRetriever(su, skills=SKILLS, top_kk=3)  # type: ignore[call-arg]


def test_history_does_not_outvote_a_message_that_matches_other_skills() -> None:
    r = lexical()
    hist = [Message("user", "git rebase stopped with a conflict, resolve it"), Message("assistant", "ok")]
    res = r.retrieve(RetrievalQuery.of("my sql query is slow, which index?", hist))
    assert res.names[0] == "sql-tuning" and "git-rebase" not in res.names
    assert res.contributions["sql-tuning"]   # the message alone scored it


def test_history_breaks_a_tie_the_message_leaves() -> None:
    r = lexical()
    msg = "show me the weather forecast today"   # both weather skills score exactly the same
    alone = r.retrieve(msg)
    assert alone.scores[0] == alone.scores[1]
    assert alone.names[:2] == ("weather-city", "weather-sea")   # index order without history
    hist = [Message("user", "we sail across the sea tomorrow"), Message("assistant", "nice")]
    res = r.retrieve(RetrievalQuery.of(msg, hist))
    assert res.names[:2] == ("weather-sea", "weather-city")
    assert res.scores == alone.scores          # the history changed the order, not the scores


def test_short_follow_up_reads_the_question_it_follows() -> None:
    r = lexical()
    hist = [Message("user", "extract the tables from this PDF file"), Message("assistant", "Done."),
            Message("user", "why?"), Message("assistant", "Because.")]
    q = RetrievalQuery.of("and images?", hist)
    assert q.previous_users == ("why?", "extract the tables from this PDF file")
    assert ranking_text("and images?", q) == "extract the tables from this PDF file\nwhy?\nand images?"
    assert r.retrieve(q).names[:1] == ("pdf-extract",)


def test_follow_up_rule_counts_words_in_english_and_characters_in_chinese() -> None:
    assert is_follow_up("why?") and is_follow_up("and in Chinese?") and is_follow_up("为什么？")
    assert not is_follow_up("my sql query is slow") and not is_follow_up("帮我查一下最近的违章记录")


def test_a_trigger_fires_on_the_message_only_never_on_history() -> None:
    r = lexical()
    hist = [Message("user", "I hit a rebase conflict"), Message("assistant", "Fixed.")]
    res = r.retrieve(RetrievalQuery.of("now speed up my slow sql query", hist))
    assert res.layer == "L5" and res.names[0] == "sql-tuning"
    assert r.retrieve(RetrievalQuery.of("another rebase conflict", hist)).layer == "L1"


def test_plain_message_and_history_become_one_query() -> None:
    hist = [Message("user", "first"), Message("assistant", "reply"), Message("tool", "x")]
    q = as_retrieval_query("second", hist)
    assert q == RetrievalQuery("second", ("reply", "first"), ("first",))
    assert as_retrieval_query(q) is q


def test_skill_list_and_trigger_hit_load_no_model(counting_embedder) -> None:  # type: ignore[no-untyped-def]
    r = SkillRetriever(skills=SKILLS, embedders=[counting_embedder])
    sel = SkillSelection(r)
    assert sel.has_skills()
    assert sorted(s.name for s in r.skills) == sorted(s.name for s in SKILLS)
    res = r.retrieve("I have a rebase conflict")
    assert res.layer == "L1"
    assert counting_embedder.calls == []          # nothing embedded: no model would have loaded
    res = r.retrieve("speed up my slow sql query")
    assert res.layer == "L5" and "dense" in res.answered
    assert ("documents", len(SKILLS)) in counting_embedder.calls


def test_dense_layer_embeds_the_message_not_the_history(counting_embedder) -> None:  # type: ignore[no-untyped-def]
    r = SkillRetriever(skills=SKILLS, embedders=[counting_embedder])
    hist = [Message("user", "x" * 250), Message("assistant", "y" * 250)]
    msg = "speed up my slow sql query"
    r.retrieve(RetrievalQuery.of(msg, hist))
    queries = [n for kind, n in counting_embedder.calls if kind == "query"]
    assert queries == [len(msg)]


def test_gate_anchor_vectors_are_cached_with_the_skill_vectors(tmp_path, counting_embedder) -> None:  # type: ignore[no-untyped-def]
    from hermes_core.retrieval.retriever import NULL_ANCHORS

    first = SkillRetriever(skills=SKILLS, embedders=[counting_embedder], cache_dir=tmp_path)
    first.refresh()
    assert ("documents", len(NULL_ANCHORS)) in counting_embedder.calls
    counting_embedder.calls.clear()
    again = SkillRetriever(skills=SKILLS, embedders=[counting_embedder], cache_dir=tmp_path)
    again.refresh()
    assert counting_embedder.calls == []            # skills and anchors all came from the cache
    assert (again._anchors["test:counting"] == first._anchors["test:counting"]).all()
