"""The skill catalog survives one pathological file: it is skipped with a reason, the rest load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.retrieval.skills import load_catalog, load_jsonl_catalog, load_skill_folders

GOOD = "---\nname: {name}\ndescription: {name} things\n---\nDo {name} things.\n"
BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ["x"] * 9) + "]\n"
    for i in range(7))


def _skill(root: Path, folder: str, text: str) -> Path:
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    return d / "SKILL.md"


@pytest.mark.parametrize("front,reason", [
    ("name: deep\ndescription: d\nx: " + "[" * 500 + "]" * 500, "levels deep"),
    ("name: deep\ndescription: d\nx:\n" + "".join("  " * i + "- \n" for i in range(1, 200)),
     "levels deep"),
    ("name: bomb\ndescription: d\n" + BOMB, "alias"),
    ("name: loop\ndescription: d\nx: &a\n  y: *a", "recursive alias"),
    ("name: big\ndescription: d\nn: " + "9" * 5000, "unreadable value"),
])
def test_one_pathological_front_matter_is_skipped_and_named(tmp_path, front, reason):
    _skill(tmp_path, "a-good", GOOD.format(name="alpha"))
    bad = _skill(tmp_path, "b-bad", f"---\n{front}\n---\nbody\n")
    _skill(tmp_path, "c-good", GOOD.format(name="gamma"))
    skills, issues = load_skill_folders([tmp_path])
    assert [s.name for s in skills] == ["alpha", "gamma"]
    assert len(issues) == 1 and issues[0].path == str(bad) and reason in issues[0].reason


def test_catalog_with_a_hostile_skill_keeps_every_good_skill(tmp_path):
    for i in range(5):
        _skill(tmp_path, f"s{i}", GOOD.format(name=f"skill{i}"))
    _skill(tmp_path, "zz", "---\nname: z\ndescription: z\nx: " + "{a: " * 400 + "1" + "}" * 400
           + "\n---\n")
    catalog = load_catalog([tmp_path], warn=False)
    assert len(catalog.skills) == 5 and any("zz" in i.path for i in catalog.issues)


def test_jsonl_lines_that_break_the_json_parser_are_skipped_with_their_line(tmp_path):
    path = tmp_path / "cat.jsonl"
    lines = [json.dumps({"name": "ok1", "description": "first"}),
             "[" * 100_000 + "]" * 100_000,
             '{"name": "n", "description": "d", "x": ' + "9" * 5000 + "}",
             json.dumps({"name": "ok2", "description": "second"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    skills, issues = load_jsonl_catalog(path)
    assert [s.name for s in skills] == ["ok1", "ok2"]
    assert sorted(i.line for i in issues if i.line) == [2, 3]
    assert all(str(path) == i.path for i in issues)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hermes_core.retrieval.skills import parse_skill_md  # noqa: E402

_BITS = st.sampled_from(["---\n", "name: a\n", "description: b\n", "x: ", "&a ", "*a", "[", "]",
                         "{", "}", "\n", "  ", "- ", "9" * 50, "'", "...\n", "\ufeff", "\r\n", "ä"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_BITS, max_size=40).map("".join) | st.text(max_size=200))
def test_any_skill_md_text_parses_or_is_one_clear_value_error(text):
    try:
        skill = parse_skill_md(text, "SKILL.md")
    except ValueError as e:
        assert str(e)
    else:
        assert skill.name and skill.description
