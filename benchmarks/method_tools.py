"""What reading a method tool from an instance costs: the first read on each new instance, a
later read on the same one, and a read on an instance with ``__slots__`` (no ``__dict__``);
beside them, what a generator tool's answer costs (``GENERATOR_ITEMS`` model rows drawn and
written) and what an output model's schema costs per turn (``response_format``).

    python benchmarks/method_tools.py --json [--samples 400] [--rounds 3] [--baseline ROOT]

A method decorated with ``@tool`` becomes each instance's own tool when read from it. Each
figure is the median of ``--samples`` reads (a tenth as many generator answers), in
microseconds. With ``--baseline ROOT`` (another
checkout, e.g. ``/work/main``) both trees are measured in the same run, in alternating
subprocesses (``--rounds`` each, the median of their medians kept), and ``*_vs_baseline`` is
this tree's median over the baseline's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
FIGURES = ("first_read_us_p50", "again_us_p50", "slots_read_us_p50", "make_tool_us_p50",
           "generator_answer_us_p50", "output_schema_us_p50")
GENERATOR_ITEMS = 500


def _median_us(call: Callable[[], Any], samples: int) -> float:
    return round(statistics.median(timeit.repeat(call, number=1, repeat=samples)) * 1e6, 2)


def measure(samples: int) -> dict[str, float]:
    """The figures for the hermes_core on ``sys.path`` (this process's)."""
    from pydantic import BaseModel

    from hermes_core.agent.tools.runner import _call_sync
    try:
        from hermes_core.agent.tools.render import render_output
    except ImportError:   # a baseline checkout from before rendering had its own module
        from hermes_core.agent.tools.runner import render_output  # type: ignore[attr-defined,no-redef]
    from hermes_core.agent.tools.schema import make_tool, tool
    from hermes_core.agent.tools.structured import response_format

    def search(query: str, limit: int = 10, tags: list[str] | None = None) -> str:
        """Search the notes.

        Args:
            query: what to look for
            limit: how many
            tags: labels to filter by
        """
        return query

    class Notes:
        @tool
        def search(self, query: str, limit: int = 10, tags: list[str] | None = None) -> str:
            """Search the notes."""
            return query

    class Slotted:
        __slots__ = ()

        @tool
        def search(self, query: str, limit: int = 10, tags: list[str] | None = None) -> str:
            """Search the notes."""
            return query

    fresh = [Notes() for _ in range(samples)]
    it = iter(fresh)
    first = _median_us(lambda: next(it).search, samples)
    again = _median_us(lambda: fresh[0].search, samples)
    slotted = Slotted()
    slots = _median_us(lambda: slotted.search, samples)
    made = _median_us(lambda: make_tool(search), max(1, samples // 4))

    class Row(BaseModel):
        id: int
        title: str
        tags: list[str]
        score: float

    class Stop(BaseModel):
        city: str
        nights: int
        sights: list[str]

    class Trip(BaseModel):
        """A trip."""

        title: str
        stops: list[Stop]
        budget_eur: float | None = None

    made_rows = [Row(id=i, title=f"row {i}", tags=["a", "b"], score=i / 7)
                 for i in range(GENERATOR_ITEMS)]

    def rows() -> Any:   # built beforehand: the figure is the answer's encoding, not pydantic's
        yield from made_rows

    def call(*_: Any, **__: Any) -> Any:   # a tool's invoke(args) here, fn(**args) before it
        return rows()

    answer = _median_us(lambda: render_output(_call_sync(call, {})), max(1, samples // 10))
    schema = _median_us(lambda: response_format(Trip), samples)
    return dict(zip(FIGURES, (first, again, slots, made, answer, schema), strict=True))


def _worker(root: Path, samples: int) -> dict[str, float]:
    code = (f"import sys, json; sys.path.insert(0, {str(root)!r}); "
            f"sys.path.insert(0, {str(HERE / 'benchmarks')!r}); "
            f"import method_tools; print(json.dumps(method_tools.measure({samples})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root)
    result: dict[str, float] = json.loads(out.stdout)
    return result


def run(samples: int, rounds: int, baseline: Path | None) -> dict[str, Any]:
    roots = {"branch": HERE, **({"baseline": baseline} if baseline else {})}
    seen: dict[str, list[dict[str, float]]] = {k: [] for k in roots}
    for _ in range(rounds):
        for name, root in roots.items():   # alternating: the same load falls on both
            seen[name].append(_worker(root, samples))
    report: dict[str, Any] = {"samples": samples, "rounds": rounds}
    for name, runs in seen.items():
        for fig in FIGURES:
            report[f"{name}_{fig}"] = round(statistics.median(r[fig] for r in runs), 2)
    if baseline:
        for fig in FIGURES:
            report[f"{fig}_vs_baseline"] = round(report[f"branch_{fig}"] / report[f"baseline_{fig}"], 4)
    return report


def main() -> None:
    from hermes_core.cli.argtypes import positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--samples", type=positive_int, default=400)
    ap.add_argument("--rounds", type=positive_int, default=3)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to compare with")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = run(args.samples, args.rounds, args.baseline)
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
