"""What folding traditional Chinese to simplified costs: OpenCC's t2s on 100 KB, and a turn's match
keys (``bm25_tokens`` and ``normalize`` of the message) with the fold against the same without it.

Texts are HammerBench-zh's dev queries converted to Taiwan traditional (OpenCC s2twp), plus the
simplified originals, so the measure holds for both scripts. "Without" swaps ``to_simplified`` for
the identity in the tokenizer; jieba's run cache is cleared before every pass so each pass
segments every run, as a turn with a new message does. Passes alternate (with, without) and the
figures are medians, so their ratio is the comparison.

    python benchmarks/han_fold.py [--reps 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import opencc

from hermes_core import tokenize as tok
from hermes_core.retrieval import bm25

ROOT = Path(__file__).resolve().parents[1]
# the eval data sits beside the repo (../shared/eval), as turn.py and retrieval_lexical.py find it
EVAL = Path(os.environ.get("HERMES_EVAL_DIR") or next(
    (str(p) for p in (ROOT.parent / "shared" / "eval", ROOT.parent.parent / "shared" / "eval")
     if p.is_dir()), str(ROOT.parent / "shared" / "eval")))
DEV = EVAL / "hammerbench-zh" / "queries.dev.jsonl"


def queries() -> tuple[list[str], list[str]]:
    simplified = [json.loads(line)["query"] for line in DEV.read_text(encoding="utf-8").splitlines()]
    to_tw = opencc.OpenCC("s2twp")
    return simplified, [to_tw.convert(q) for q in simplified]


@contextmanager
def without_fold() -> Iterator[None]:
    def same(text: str) -> str:
        return text

    with mock.patch.object(tok, "to_simplified", same), mock.patch.object(bm25, "to_simplified", same):
        yield


def turn_keys(texts: list[str]) -> float:
    """Seconds to derive every text's BM25 tokens and normalised text, jieba's cache cold."""
    tok._segment_cjk.cache_clear()
    t0 = time.perf_counter()
    for q in texts:
        bm25.bm25_tokens(q)
        tok.normalize(q)
    return time.perf_counter() - t0


def median_of(fn: Callable[[], float], reps: int) -> float:
    return statistics.median(fn() for _ in range(reps))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    simplified, traditional = queries()
    texts = simplified + traditional
    tok.to_simplified("預熱")             # the converter's dictionaries load once, not per pass
    tok.jieba_available()

    blob = "\n".join(traditional)
    blob = (blob * (100_000 // len(blob) + 1))[:100_000]

    def convert_100k() -> float:
        t0 = time.perf_counter()
        tok.to_simplified(blob)
        return time.perf_counter() - t0

    fold_s = median_of(convert_100k, args.reps)
    with_fold, without = [], []
    for _ in range(args.reps):
        with_fold.append(turn_keys(texts))
        with without_fold():
            without.append(turn_keys(texts))
    per_q = statistics.median(with_fold) / len(texts) * 1e6
    per_q_plain = statistics.median(without) / len(texts) * 1e6
    out = {
        "t2s_chars_per_s": round(len(blob) / fold_s),
        "t2s_100k_ms": round(fold_s * 1e3, 2),
        "queries": len(texts),
        "turn_keys_us_with_fold": round(per_q, 1),
        "turn_keys_us_without_fold": round(per_q_plain, 1),
        "ratio_with_over_without": round(per_q / per_q_plain, 3),
        "reps": args.reps,
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:28s} {v}")


if __name__ == "__main__":
    main()
