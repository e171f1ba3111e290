"""The skills walk is bounded: a link to a huge tree inside skills/ must not make every refresh
(and the per-turn change check) walk the whole disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_fixtures import skill_md, write_skill

from hermes_core.retrieval import skills as skills_mod
from hermes_core.retrieval.skills import load_catalog


def test_depth_and_package_trees_bound_the_walk(tmp_path: Path) -> None:
    write_skill(tmp_path, "team/deploy", skill_md("deploy", "Deploy the service."))
    deep = "/".join(f"d{i}" for i in range(skills_mod.MAX_WALK_DEPTH + 2))
    write_skill(tmp_path, deep, skill_md("too-deep", "Below the depth limit."))
    write_skill(tmp_path, "tool/node_modules/pkg", skill_md("vendored", "Inside node_modules."))
    write_skill(tmp_path, ".git/hooks", skill_md("hidden", "Inside a hidden folder."))
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == ["deploy"]
    assert cat.issues == ()


def test_a_huge_tree_stops_the_walk_with_an_issue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skills_mod, "MAX_WALK_DIRS", 5)
    write_skill(tmp_path, "a", skill_md("alpha", "First."))
    for i in range(10):
        (tmp_path / "zz" / f"dir{i}").mkdir(parents=True)
    linked = tmp_path / "home-link"
    linked.symlink_to(tmp_path / "zz")
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == ["alpha"]
    assert [i.reason for i in cat.issues] == [
        "stopped looking for skills after 5 folders (a link to a large tree inside it?)"]
