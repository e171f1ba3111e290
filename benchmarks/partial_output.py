"""Reading a structured reply still arriving nested very deep, against one as long but flat.

:func:`hermes_core.agent.tools.structured.parse_draft` reads the drafts of a structured reply
(``Agent.stream_output``) about every 1/32 of its growth. A reply nested deeper than the JSON
decoder recurses (a runaway or hostile model) is no object, but the prose scan tried a decode
from each of its first 64 ``{`` before saying so, each failing at the decoder's depth. Timed back
to back R times, each a median over the reads of one reply of about C characters:

* ``deep``: ``{"a": {"a": ...`` nested past the decoder's depth (no object);
* ``flat``: ``{"city": "xxx...`` as long, one string still arriving (a partial object);
* ``mid``: nested 900 deep, past pydantic's depth (~200) but not the decoder's (~1,000), against
  ``mid_flat``, a flat one as long.

Prints medians, ``ratio = deep_ms_p50 / flat_ms_p50`` and ``mid_ratio = mid_ms_p50 /
mid_flat_ms_p50``.

    python benchmarks/partial_output.py --json [--chars C] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from pydantic import BaseModel

from hermes_core.agent.tools.structured import parse_draft
from hermes_core.cli.argtypes import positive_int


class Trip(BaseModel):
    city: str = ""


def read_ms(text: str) -> float:
    t = time.perf_counter()
    parse_draft(text, Trip)
    return (time.perf_counter() - t) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=positive_int, default=15_000)
    ap.add_argument("--repeat", type=positive_int, default=21)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    level = '{"a": '
    deep = level * (args.chars // len(level))
    flat = '{"city": "' + "x" * (len(deep) - 10)
    assert parse_draft(deep, Trip) is None and parse_draft(flat, Trip) is not None
    mid = level * 900
    mid_flat = '{"city": "' + "x" * (len(mid) - 10)
    assert parse_draft(mid, Trip) is None and parse_draft(mid_flat, Trip) is not None
    deep_runs: list[float] = []
    flat_runs: list[float] = []
    mid_runs: list[float] = []
    mid_flat_runs: list[float] = []
    for _ in range(args.repeat):
        deep_runs.append(read_ms(deep))
        flat_runs.append(read_ms(flat))
        mid_runs.append(read_ms(mid))
        mid_flat_runs.append(read_ms(mid_flat))
    out = {"chars": len(deep), "repeat": args.repeat,
           "deep_ms_p50": round(statistics.median(deep_runs), 3),
           "flat_ms_p50": round(statistics.median(flat_runs), 3)}
    out["ratio"] = round(statistics.median(deep_runs) / statistics.median(flat_runs), 1)
    out["mid_chars"] = len(mid)
    out["mid_ms_p50"] = round(statistics.median(mid_runs), 3)
    out["mid_flat_ms_p50"] = round(statistics.median(mid_flat_runs), 3)
    out["mid_ratio"] = round(statistics.median(mid_runs) / statistics.median(mid_flat_runs), 1)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"a read of {len(deep)} chars: deep {out['deep_ms_p50']} ms, flat "
              f"{out['flat_ms_p50']} ms (x{out['ratio']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
