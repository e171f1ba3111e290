"""Which terms episodic search sends to FTS5, and how history breaks ties (pure decisions)."""

from __future__ import annotations

from hermes_core.agent.episodic.ranking import COMMON_ONLY_TERMS, Hit, MatchPlan, plan_match, tie_break


def test_rare_terms_are_kept_rarest_first_and_common_ones_dropped() -> None:
    plan = plan_match({"postgres": 40, "slow": 5_000, "deploy": 900, "vacuum": 3}, common_df=1_000)
    assert plan == MatchPlan(("vacuum", "postgres", "deploy"))
    assert plan.expression == '"vacuum" OR "postgres" OR "deploy"'


def test_terms_no_session_has_are_dropped_and_ties_keep_query_order() -> None:
    assert plan_match({"b": 2, "zzz": 0, "a": 2}).terms == ("b", "a")
    assert plan_match({"zzz": 0}).expression is None


def test_at_most_max_terms_go_into_the_match() -> None:
    dfs = {f"t{i}": i + 1 for i in range(20)}
    assert plan_match(dfs, max_terms=8).terms == tuple(f"t{i}" for i in range(8))


def test_only_common_terms_search_the_newest_sessions_with_the_rarest_few() -> None:
    plan = plan_match({"the": 9_000, "service": 4_000, "error": 2_000, "deploy": 3_000, "log": 8_000},
                      common_df=1_000)
    assert plan.common_only and len(plan.terms) == COMMON_ONLY_TERMS
    assert plan.terms == ("error", "deploy", "service")


def hit(rowid: int) -> Hit:
    return Hit(rowid, f"s{rowid}", 0.0, 1.0, -1.0)


def test_history_orders_equal_scores_and_never_a_better_one() -> None:
    ranked = [(hit(1), 2.0, 0.0), (hit(2), 1.0, 0.0), (hit(3), 1.0, 0.0)]
    texts = {1: ("billing outage", ()), 2: ("unrelated chat", ()), 3: ("the sea trip", ("sailing",))}
    out = tie_break(ranked, texts, ["sea", "sailing"])
    assert [h.rowid for h, _, _ in out] == [1, 3, 2]
    assert tie_break(ranked, texts, []) == ranked
    distinct = [(hit(1), 2.0, 0.0), (hit(2), 1.0, 0.0)]
    assert tie_break(distinct, texts, ["unrelated"]) == distinct
