"""Review round 2: Chinese glued to Latin letters or digits is segmented like spaced text."""

from __future__ import annotations

import pytest

from hermes_core.tokenize import tokenize


@pytest.mark.parametrize("glued, spaced", [
    ("把PDF转换成Word文档", "把 PDF 转换成 Word 文档"),
    ("明天下午3点和John开会讨论Q3预算", "明天下午 3 点和 John 开会讨论 Q 3 预算"),
    ("iPhone手机壳", "iPhone 手机壳"),
    ("3点开会", "3 点开会"),
])
def test_glued_mixed_text_tokenizes_like_spaced_text(glued: str, spaced: str) -> None:
    assert tokenize(glued) == tokenize(spaced)


def test_chinese_after_latin_is_segmented_not_kept_as_one_token() -> None:
    toks = tokenize("明天下午3点和John开会讨论Q3预算")
    assert "开会" in toks and "john" in toks and "预算" in toks
    assert not any(any(c.isascii() for c in t) and any(ord(c) > 0x3000 for c in t) for t in toks)


def test_identifiers_still_split() -> None:
    assert tokenize("Navigation.TrafficViolations.queryViolation") == [
        "navigation", "traffic", "violations", "query", "violation"]
    assert tokenize("HTTPServer2 über") == ["http", "server", "2", "über"]
