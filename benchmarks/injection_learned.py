"""Would a learned scorer help the injection rules? TF-IDF char n-grams + logistic regression.

The model scores paragraphs; a text counts as blocked when the rules block it or a paragraph of
at least ``min_chars`` scores above ``threshold``. Both are chosen on the dev half only (5-fold
cross-validation grouped by text group: the highest hostile-caught whose benign-blocked stays
<= 2%), then the model is fitted on the whole dev half and measured once on the held-out half,
per source kind, beside the rules alone. Two training sets: the committed corpus alone (what
could be trained at import from shipped data) and the committed corpus plus the third-party dev
texts (tests/data/injection/real/, built by import_real.py; not committed).

    python benchmarks/injection_learned.py --json

The scorer that ships (hermes_core/injection/learned.py) came out of this experiment; it is
trained by tests/data/injection/train_scorer.py and measured by benchmarks/injection.py. Here the
rules are run without it, as the baseline the experiment compares against.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "data" / "injection"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_corpus import WRAP  # noqa: E402
from injection import CORPUS, NAMES, REAL, load  # noqa: E402

from hermes_core.injection import INJECTION_CATEGORIES, guard_text, split_paragraphs  # noqa: E402

GRID = [(m, t) for m in (0, 200, 400) for t in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)]
MAX_DEV_BENIGN = 0.02
_WRAPPERS = {p.text.strip() for w in WRAP.values() for p in split_paragraphs(w.format(text="\0"))
             if "\0" not in p.text}


def paragraphs(row: dict[str, str]) -> list[tuple[str, int]]:
    """(paragraph, 1 when it is the hostile part) — the ordinary wrapper paragraphs are benign."""
    hostile = row["label"] == "hostile"
    return [(p.text.strip(), int(hostile and p.text.strip() not in _WRAPPERS))
            for p in split_paragraphs(row["text"])]


def fit(rows: Iterable[dict[str, str]]) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    pars = [p for r in rows for p in paragraphs(r)]
    model = make_pipeline(
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True,
                        max_features=50_000),
        LogisticRegression(C=4, class_weight="balanced", max_iter=2000))
    return model.fit([p for p, _ in pars], [y for _, y in pars])


def scores(model: Any, row: dict[str, str]) -> list[tuple[int, float]]:
    pars = [p for p, _ in paragraphs(row)]
    return list(zip(map(len, pars), model.predict_proba(pars)[:, 1], strict=True))


def blocked(rule: bool, sc: list[tuple[int, float]], min_chars: int, threshold: float) -> bool:
    return rule or max((s for n, s in sc if n >= min_chars), default=0.0) > threshold


def rates(rows: list[dict[str, str]], hits: list[bool]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for label, key in (("hostile", "hostile_caught"), ("benign", "benign_blocked")):
        sel = [h for r, h in zip(rows, hits, strict=True) if r["label"] == label]
        out[key] = round(sum(sel) / len(sel), 4) if sel else None
    return out


def experiment(dev: list[dict[str, str]], held: list[dict[str, str]],
               rule: dict[str, bool]) -> dict[str, Any]:
    from sklearn.model_selection import GroupKFold

    oof: dict[str, list[tuple[int, float]]] = {}
    for train, test in GroupKFold(5).split(dev, groups=[r["group"] for r in dev]):
        model = fit(dev[i] for i in train)
        for i in test:
            oof[dev[i]["id"]] = scores(model, dev[i])
    best: tuple[float, int, float] | None = None
    for m, t in GRID:
        r = rates(dev, [blocked(rule[x["id"]], oof[x["id"]], m, t) for x in dev])
        caught = r["hostile_caught"] or 0.0
        if (r["benign_blocked"] or 0) <= MAX_DEV_BENIGN and (best is None or caught > best[0]):
            best = (caught, m, t)
    assert best is not None
    _, m, t = best
    model = fit(dev)
    out: dict[str, Any] = {"chosen_on_dev": {"min_chars": m, "threshold": t, "dev_cv": rates(
        dev, [blocked(rule[x["id"]], oof[x["id"]], m, t) for x in dev])}}
    for kind in sorted({r.get("kind", "own") for r in held}):
        rows = [r for r in held if r.get("kind", "own") == kind]
        out[kind] = {"rules": rates(rows, [rule[r["id"]] for r in rows]),
                     "rules_or_model": rates(rows, [blocked(rule[r["id"]], scores(model, r), m, t)
                                                    for r in rows]), "texts": len(rows)}
    return out


def run(real: Path = REAL) -> dict[str, Any]:
    own = load(CORPUS)
    third = [r for r in load(real) if r["kind"] != "indirect-task"] if real.is_file() else []
    rules = tuple(c for c in INJECTION_CATEGORIES if c != "learned")   # the rules alone
    rule = {r["id"]: guard_text(r["text"], name=NAMES[r["location"]], categories=rules).blocked > 0
            for r in own + third}
    held = [r for r in own + third if r["split"] == "heldout"]
    out: dict[str, Any] = {
        "trained_on_committed_corpus": experiment([r for r in own if r["split"] == "dev"], held, rule)}
    if third:
        out["trained_with_third_party_dev"] = experiment(
            [r for r in own + third if r["split"] == "dev"], held, rule)
    else:
        out["trained_with_third_party_dev"] = {"absent": f"{real} (see import_real.py)"}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--real", type=Path, default=REAL)
    args = parser.parse_args(argv)
    out = run(args.real)
    print(json.dumps(out, ensure_ascii=False, indent=None if args.json else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
