"""Train MiniLM's query adapter (hermes_core/retrieval/data/query_adapter.npz), reproducibly.

Data: ``pairs.jsonl`` and ``catalog.jsonl`` beside this script (built by ``build_pairs.py`` from
Apache-2.0 tool-use sets; provenance per row, licences in ``LICENSES.md``). Each request is
embedded as a query and each tool as the dense layer embeds a skill (``dense.document_text``),
with the bundled all-MiniLM-L6-v2. The adapter is ``q' = normalise(q + (q B^T) A^T)``, A: 384 x
RANK, B: RANK x 384, B starting at 0 (the plain model); documents are not adapted.

Loss: for each request, softmax cross-entropy of its gold tool against every tool of its own
source (a catalog of 100-900 tools, so the negatives are the same kind of tool), at temperature
TAU, plus LAMBDA x ||A B||^2 towards the identity map. Full batch, Adam, EPOCHS steps, one torch
thread and a fixed seed: the same inputs give the same weights.

RANK, LAMBDA and EPOCHS were chosen by leave-one-source-out (``--loso``: fit on three sources,
Recall@5 on the fourth against its own catalog, mean change over the plain model), then the
shipped variant checked on the MetaTool tuning half (never its check half).

    python tests/data/adapter/train_adapter.py            # rewrites the shipped weights
    python tests/data/adapter/train_adapter.py --check    # exit 1 unless the shipped ones match
    python tests/data/adapter/train_adapter.py --loso     # the selection table
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

OUT = REPO / "hermes_core" / "retrieval" / "data" / "query_adapter.npz"
MODEL_ID = "st:all-MiniLM-L6-v2"
RANK = 16
LAMBDA = 1e-2
EPOCHS = 30
TAU = 0.05
LR = 1e-3
SEED = 0
GRID = [(16, 1e-2, 30), (32, 1e-2, 30), (64, 1e-2, 30), (32, 3e-2, 60), (32, 1e-2, 60),
        (32, 1e-3, 30), (0, 1e-2, 30)]   # rank 0: a full 384 x 384 map


def fit(queries: np.ndarray, gold: Sequence[int], groups: Sequence[str], docs: np.ndarray,
        doc_groups: Sequence[str], *, rank: int = RANK, lam: float = LAMBDA, epochs: int = EPOCHS,
        tau: float = TAU, lr: float = LR, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of the adapter fitted on ``queries`` (rows, L2-normalised) whose gold document is
    ``docs[gold[i]]``, each scored against the documents of its own group. ``rank`` 0 fits a
    full square map (returned as A = W, B = identity)."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    d = queries.shape[1]
    if rank:
        a = torch.nn.Parameter(torch.randn(d, rank, dtype=torch.float32) * 0.01)
        b = torch.nn.Parameter(torch.zeros(rank, d, dtype=torch.float32))
        params = [a, b]

        def weight() -> torch.Tensor:
            return a @ b
    else:
        w = torch.nn.Parameter(torch.zeros(d, d, dtype=torch.float32))
        params = [w]

        def weight() -> torch.Tensor:
            return w
    opt = torch.optim.Adam(params, lr=lr)
    q_all = torch.tensor(np.asarray(queries, dtype=np.float32))
    gold_arr, grp, dgrp = np.asarray(gold), np.asarray(groups), np.asarray(doc_groups)
    batches = []
    for g in sorted(set(grp.tolist())):
        rows = np.where(grp == g)[0]
        cols = np.where(dgrp == g)[0]
        pos = {int(c): k for k, c in enumerate(cols)}
        batches.append((torch.tensor(rows), torch.tensor(np.asarray(docs[cols], dtype=np.float32)),
                        torch.tensor([pos[int(x)] for x in gold_arr[rows]])))
    for _ in range(epochs):
        opt.zero_grad()
        wt = weight()
        loss = torch.zeros(())
        for rows_t, cat, target in batches:
            q = q_all[rows_t]
            q2 = torch.nn.functional.normalize(q + q @ wt.T, dim=-1)
            loss = loss + torch.nn.functional.cross_entropy(q2 @ cat.T / tau, target, reduction="sum")
        loss = loss / len(q_all) + lam * (wt ** 2).sum()
        loss.backward()
        opt.step()
    if rank:
        return a.detach().numpy().copy(), b.detach().numpy().copy()
    return w.detach().numpy().copy(), np.eye(d, dtype=np.float32)


def adapt(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    y = x + (x @ b.T) @ a.T
    out: np.ndarray = y / np.linalg.norm(y, axis=1, keepdims=True)
    return out


def recall_at_5(q: np.ndarray, docs: np.ndarray, gold: np.ndarray) -> float:
    s = q @ docs.T
    g = s[np.arange(len(gold)), gold]
    return float(((s > g[:, None]).sum(1) < 5).mean())


def load() -> tuple[list[dict[str, object]], list[dict[str, object]], str]:
    raw = [(HERE / n).read_bytes() for n in ("pairs.jsonl", "catalog.jsonl")]
    digest = hashlib.sha256(b"\x00".join(raw)).hexdigest()
    pairs = [json.loads(x) for x in raw[0].decode().splitlines() if x.strip()]
    catalog = [json.loads(x) for x in raw[1].decode().splitlines() if x.strip()]
    return pairs, catalog, digest


def embed(pairs: Sequence[dict[str, object]],
          catalog: Sequence[dict[str, object]]) -> tuple[np.ndarray, np.ndarray]:
    from hermes_core.retrieval.dense import SentenceTransformerEmbedder, document_text
    emb = SentenceTransformerEmbedder()
    assert emb.model_id == MODEL_ID
    q = emb.embed_queries([str(p["query"]) for p in pairs])
    d = emb.embed_documents([document_text(SimpleNamespace(name=c["name"], description=c["description"]))  # type: ignore[arg-type]
                             for c in catalog])
    return q, d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--loso", action="store_true")
    args = ap.parse_args()
    pairs, catalog, digest = load()
    q, d = embed(pairs, catalog)
    gold = np.array([int(str(p["tool"])) for p in pairs])
    groups = [str(p["source"]) for p in pairs]
    dgroups = [str(c["source"]) for c in catalog]
    if args.loso:
        grp, dgrp = np.asarray(groups), np.asarray(dgroups)
        for rank, lam, epochs in GRID:
            deltas = []
            for held in sorted(set(groups)):
                tr = np.where(grp != held)[0]
                a, b = fit(q[tr], gold[tr], grp[tr], d, dgroups, rank=rank, lam=lam, epochs=epochs)
                te = np.where(grp == held)[0]
                cols = np.where(dgrp == held)[0]
                pos = {int(c): k for k, c in enumerate(cols)}
                g = np.array([pos[int(x)] for x in gold[te]])
                deltas.append(recall_at_5(adapt(a, b, q[te]), d[cols], g) - recall_at_5(q[te], d[cols], g))
            print(json.dumps({"rank": rank, "lambda": lam, "epochs": epochs,
                              "loso_delta_recall@5": [round(x, 3) for x in deltas],
                              "mean": round(float(np.mean(deltas)), 4)}), flush=True)
        return 0
    a, b = fit(q, gold, groups, d, dgroups)
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    if args.check:
        with np.load(OUT, allow_pickle=False) as z:
            same = (np.array_equal(z["a"], a16) and np.array_equal(z["b"], b16)
                    and str(z["inputs_sha256"][()]) == digest)
        print("shipped adapter matches" if same else "shipped adapter differs")
        return 0 if same else 1
    np.savez_compressed(OUT, model_id=np.array(MODEL_ID), a=a16, b=b16, inputs_sha256=np.array(digest),
                        params=np.array(json.dumps({"rank": RANK, "lambda": LAMBDA, "epochs": EPOCHS,
                                                    "tau": TAU, "lr": LR, "seed": SEED})))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes) from {len(pairs)} pairs, {len(catalog)} tools")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
