"""Token counting: how far the character estimate and o200k_base are from another tokenizer, and
what exact counts cost.

For each content type (English, code, JSON, logs, hex, base64, Chinese, Japanese, Korean, Thai,
Hindi, Arabic, emoji) it counts one text with the old character estimate
(``tokenize.estimate_tokens``), with ``o200k_base`` and with ``cl100k_base``. ``cl100k_base``
stands in for a model whose tokenizer we do not have (no other model's tokenizer is available
offline): a budget for such a model is one count scaled by one calibration ratio, so what matters
is how much that ratio swings with the content. ``spread`` is the largest over the smallest ratio
across the types: the estimate's against o200k's.

Speed: ``count_tokens`` (uncached) against the estimate on the same texts, interleaved, medians
(their ratio is the comparison). The first load of an encoding is timed in a fresh process.

    python benchmarks/token_count.py --json
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from hermes_core import tokens
from hermes_core.tokenize import _estimate as estimate  # uncached: the cost of one count

REPO = Path(__file__).resolve().parent.parent


def corpus() -> dict[str, str]:
    rng = random.Random(11)
    code = (REPO / "hermes_core" / "agent" / "prompt" / "compaction.py").read_text()[:8000]
    return {
        "english": ("The release was rolled back after the gateway started returning errors; "
                    "we reproduced it, isolated the change and added a regression test. ") * 40,
        "code": code,
        "json": json.dumps([{"id": i, "name": f"item-{i}", "price": round(i * 1.25, 2),
                             "tags": ["a", "b"], "ok": i % 2 == 0} for i in range(120)]),
        "log": "\n".join(f"2026-12-04T19:{i % 60:02d}:00Z INFO worker[{i}] GET /api/v1/items?id="
                         f"{i * 7} 200 {i * 3}ms" for i in range(100)),
        "hex": rng.randbytes(2000).hex(),
        "base64": base64.b64encode(rng.randbytes(3000)).decode(),
        "chinese": "我们讨论了如何部署服务，决定周五之前完成数据库迁移，并在预发环境验证。" * 40,
        "japanese": "今日の会議では、新しいデプロイ手順とロールバックの方法を確認しました。" * 40,
        "korean": "오늘 회의에서는 새로운 배포 절차와 롤백 방법을 확인했습니다. " * 40,
        "thai": "วันนี้เราประชุมเรื่องขั้นตอนการติดตั้งระบบใหม่และวิธีย้อนกลับ " * 40,
        "hindi": "आज की बैठक में हमने नई तैनाती प्रक्रिया और वापसी के तरीके पर चर्चा की। " * 40,
        "arabic": "ناقشنا اليوم في الاجتماع خطوات النشر الجديدة وطريقة التراجع عنها. " * 40,
        "emoji": "Shipped 🚀 tests green ✅ 👍🏽 family 👨‍👩‍👧 flags 🇫🇷🇯🇵 ❤️‍🔥 " * 40,
    }


def _median_us(fn: object, text: str, reps: int) -> float:
    call = fn  # type: ignore[assignment]
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            call(text)  # type: ignore[operator]
        runs.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(runs)


def first_load_ms() -> dict[str, float]:
    """Import and first count in a fresh process (what a CLI command that counts pays once)."""
    code = ("import time; t0 = time.perf_counter(); from hermes_core import tokens; "
            "t1 = time.perf_counter(); tokens.count_tokens('hello'); t2 = time.perf_counter(); "
            "print((t1 - t0) * 1e3, (t2 - t1) * 1e3)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=REPO).stdout.split()
    return {"import_ms": round(float(out[0]), 1), "first_count_ms": round(float(out[1]), 1)}


def run(reps: int) -> dict[str, object]:
    rows: dict[str, dict[str, float]] = {}
    speed: list[float] = []
    for name, text in corpus().items():
        est = estimate(text)
        o200k = tokens.count_tokens(text, "o200k_base")
        cl100k = tokens.count_tokens(text, "cl100k_base")
        t_est = _median_us(estimate, text, reps)
        t_bpe = _median_us(lambda s: tokens._count(s, "o200k_base"), text, reps)
        speed.append(t_bpe / t_est)
        rows[name] = {"chars": len(text), "estimate": est, "o200k": o200k, "cl100k": cl100k,
                      "o200k_over_estimate": round(o200k / est, 2),
                      "cl100k_over_estimate": round(cl100k / est, 2),
                      "cl100k_over_o200k": round(cl100k / o200k, 2),
                      "estimate_us": round(t_est, 1), "o200k_us": round(t_bpe, 1)}

    def spread(key: str) -> float:
        values = [r[key] for r in rows.values()]
        return round(max(values) / min(values), 2)

    return {"types": rows,
            "spread_cl100k_over_estimate": spread("cl100k_over_estimate"),
            "spread_cl100k_over_o200k": spread("cl100k_over_o200k"),
            "spread_o200k_over_estimate": spread("o200k_over_estimate"),
            "count_over_estimate_time_median": round(statistics.median(speed), 1),
            **first_load_ms()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="calls per timing (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    result = run(args.reps)
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
