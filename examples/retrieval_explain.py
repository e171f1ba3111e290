"""Why did the retriever pick these skills? Each layer's contribution, for a few queries.

Uses the bundled example home's skills. Run: python examples/retrieval_explain.py ["your query" ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from hermes_core.config import load_settings
from hermes_core.retrieval.retriever import build_retriever

HOME = Path(__file__).parent / "home"
QUERIES = ("my pod keeps restarting after the deploy", "帮我查一下这辆车的违章记录",
           "the SQL report takes 40 seconds, how do I speed it up?", "tell me a joke")


def main(queries: list[str]) -> int:
    retriever = build_retriever(load_settings(home=HOME))
    for query in queries or QUERIES:
        r = retriever.retrieve(query)
        verdict = "gated: no skill fits" if r.gated else f"decided by {r.layer}"
        print(f"\n> {query}\n  {verdict}; layers that answered: {', '.join(r.answered) or 'none'}")
        if r.trigger is not None:
            print(f"  trigger: {r.trigger}")
        for skill, score in zip(r.skills, r.scores or [0.0] * len(r.skills), strict=False):
            per_layer = r.contributions.get(skill.name, {})
            why = ", ".join(f"{layer} {value:+.3f}" for layer, value in per_layer.items())
            print(f"  {skill.name:<28} fused {score:.3f}   {why}")
        print("  timings: " + ", ".join(f"{k} {v:.1f} ms" for k, v in r.timings_ms.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
