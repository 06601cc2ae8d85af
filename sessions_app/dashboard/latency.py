"""Latency percentiles of the overview: model-step latencies from transcript facts, and percentiles the way
PostgreSQL's `percentile_cont` takes them (linear between the two nearest values). Pure.

A model step is one response: it starts when the request before it was made (the latest time the request or its
parts carry, as the run timeline reads it) and ends at the response's own timestamp.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from model_messages.serialization import iso_datetime


@dataclass(frozen=True)
class Percentiles:
    count: int
    p50: float | None
    p95: float | None

    @property
    def p50_label(self) -> str:
        return duration_text(self.p50)

    @property
    def p95_label(self) -> str:
        return duration_text(self.p95)


def duration_text(ms: float | None) -> str:
    """Milliseconds as a person reads them: 850 ms, 7.2 s, 3.5 min, 1.2 h, 3.0 d; a dash for none."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The `fraction` percentile of `values` (any order), interpolated as percentile_cont does; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    at = fraction * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def percentiles(values: Sequence[float]) -> Percentiles:
    return Percentiles(len(values), percentile(values, 0.5), percentile(values, 0.95))


def _request_time(facts: Mapping[str, Any]) -> datetime | None:
    times = [t for t in (iso_datetime(p.get("timestamp")) for p in facts.get("parts") or ()) if t is not None]
    stamped = iso_datetime(facts.get("timestamp"))
    if stamped is not None:
        times.append(stamped)
    return max(times) if times else None


def _comparable(start: datetime | None, end: datetime | None) -> bool:
    return start is not None and end is not None and (start.tzinfo is None) == (end.tzinfo is None)


def step_latencies(rows: Iterable[tuple[object, Mapping[str, Any]]]) -> list[tuple[str, float]]:
    """(model name, milliseconds) of each timed model step among transcript rows given as (conversation, facts)
    in transcript order. A response without a time, or with no timed request before it in its conversation, or
    timed before its request (clocks disagree), is left out rather than guessed."""
    steps: list[tuple[str, float]] = []
    conversation: object = None
    asked: datetime | None = None
    for owner, facts in rows:
        if owner != conversation:
            conversation, asked = owner, None
        if facts.get("kind") == "response":
            answered = iso_datetime(facts.get("timestamp"))
            if _comparable(asked, answered) and answered >= asked:  # type: ignore[operator]
                steps.append((str(facts.get("model_name") or ""), (answered - asked).total_seconds() * 1000))  # type: ignore[operator]
            asked = None  # the next step starts at the next request
        else:
            asked = _request_time(facts) or asked
    return steps
