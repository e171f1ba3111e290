"""What offering the author's tools costs a turn: ``ToolRegistry.specs()`` with 20 tools.

    python benchmarks/tool_specs.py --json [--tools 20] [--samples 300]

Each turn's ``Agent.prepare`` asks the registry for every tool's schema. Twenty tools of the
shapes authors write (strings, numbers with bounds, a Literal, an optional pydantic model, a list,
a dict) are registered; ``specs_us_p50`` is the median of one ``specs()`` call. Beside it, in the
same run, generating every tool's schema afresh with pydantic (``fresh_us_p50``: what each call
cost before schemas were kept per arguments model). Reported: both medians and
``specs_vs_fresh`` (their ratio; goal <= 0.1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel, Field

from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.cli.argtypes import positive_int


class Address(BaseModel):
    street: str
    city: str
    zip_code: str | None = None


def _tool(i: int) -> Any:
    def fn(query: str, limit: Annotated[int, Field(ge=1, le=100)] = 10,
           mode: Literal["fast", "exact"] = "fast", address: Address | None = None,
           tags: list[str] | None = None, extra: dict[str, float] | None = None) -> str:
        """Search something.

        Args:
            query: what to look for
            limit: how many results
            mode: how hard to look
            address: where, when it matters
            tags: labels to filter by
            extra: weights by field
        """
        return query

    fn.__name__ = f"search_{i}"
    return fn


def _median_us(call: Any, samples: int) -> float:
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1e6)
    return round(statistics.median(times), 2)


def run(tools: int, samples: int) -> dict[str, Any]:
    registry = ToolRegistry([_tool(i) for i in range(tools)])
    models = [t.arguments for t in registry]
    specs = _median_us(registry.specs, samples)
    fresh = _median_us(lambda: [m.model_json_schema() for m in models], samples)
    return {"tools": tools, "samples": samples, "specs_us_p50": specs, "fresh_us_p50": fresh,
            "specs_vs_fresh": round(specs / fresh, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--tools", type=positive_int, default=20)
    ap.add_argument("--samples", type=positive_int, default=300)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = run(args.tools, args.samples)
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
