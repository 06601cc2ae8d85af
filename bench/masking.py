"""What the credential detectors cost on the hostile inputs of the issue-29 probe, and on tenfold of each.

    .venv/bin/python bench/masking.py [--repeats 7] [--json bench/results/masking.json]

Each input goes through `masking.redact` (every row of masking/detectors.DETECTORS, no tenant pattern) `repeats`
times after one warm-up; median and p95 in milliseconds, and the ratio of the tenfold input's median to the
input's (about 10 when the work is linear). On Python's `re` the probe measured, through POST /api/v1/snapshots:
`key ` + 5,000 dashes 11.1 s, + 20,000 dashes a 500 after 60.2 s, a 60 kB base64url blob next to `key` 29.0 s,
`x:// ` + `a.` × 100,000 23.0 s.
"""

import argparse
import base64
import json
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from masking import redact  # noqa: E402

_BLOB = base64.urlsafe_b64encode(random.Random(29).randbytes(45_000)).decode()

# name -> (input, its tenfold)
INPUTS = {
    "key + 5,000 dashes": ("key " + "-" * 5_000, "key " + "-" * 50_000),
    "key + 20,000 dashes": ("key " + "-" * 20_000, "key " + "-" * 200_000),
    "key + 60 kB base64url": ("key " + _BLOB, "key " + _BLOB * 10),
    "x:// + a. x 100,000": ("x:// " + "a." * 100_000, "x:// " + "a." * 1_000_000),
    "token=a x 10,000 (matches)": ("token=a " * 10_000, "token=a " * 100_000),
    '{"secret": x 10,000 (unclosed)': ('{"secret": ' * 10_000, '{"secret": ' * 100_000),
    "password:\\n x 10,000 (label lines)": ("password:\n" * 10_000, "password:\n" * 100_000),
    # A part at the 1,000,000-character cap made of nothing but matches (the tenfold is past the cap; shown for
    # the shape of the cost).
    "token=a x 125,000 (a part at the cap)": ("token=a " * 125_000, "token=a " * 1_250_000),
}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _time(text: str, repeats: int) -> dict[str, float]:
    redact(text)
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        redact(text)
        timings.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(timings), 3), "p95_ms": round(_percentile(timings, 0.95), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = {}
    for name, (text, tenfold) in INPUTS.items():
        one, ten = _time(text, args.repeats), _time(tenfold, args.repeats)
        ratio = round(ten["median_ms"] / max(one["median_ms"], 1e-6), 1)
        rows[name] = {"chars": len(text), **one, "tenfold": ten, "ratio": ratio}
        print(
            f"{name:38} {len(text):>9,} chars  median {one['median_ms']:8.2f} ms  p95 {one['p95_ms']:8.2f} ms"
            f"  tenfold median {ten['median_ms']:9.2f} ms  ratio {ratio:5.1f}",
            flush=True,
        )
    if args.json:
        machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": 2}
        report = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine, "inputs": rows}
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
