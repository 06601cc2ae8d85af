"""Geometry of the overview's bar charts: stacked bars per day in an SVG coordinate box. Pure.

The page draws the rectangles this computes as SVG attributes (the Content-Security-Policy refuses inline
styles, and no charting library runs in the browser); the same numbers are shown as a table under each chart.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

WIDTH = 720
HEIGHT = 180
# Room on the left for the value ticks and at the bottom for the day labels.
LEFT = 44
BOTTOM = 20
TOP = 6


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: str  # the series' name
    label: str  # the day, for the bar's <title>
    value: float


@dataclass(frozen=True)
class Tick:
    y: float
    value: float


@dataclass(frozen=True)
class AxisLabel:
    x: float
    text: str


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    baseline: float
    left: float
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]
    labels: tuple[AxisLabel, ...]
    maximum: float


def days_between(first: date, last: date) -> list[date]:
    """Every day from `first` to `last`, both included (empty when `last` comes first)."""
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at or above `value` (1 for nothing), so ticks read well."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power  # pragma: no cover - the loop always returns


def stacked_bars(days: Sequence[date], series: Sequence[tuple[str, Sequence[float]]]) -> BarChart:
    """One column per day, the series stacked bottom up in order; each series is its name and one value per day."""
    if any(len(values) != len(days) for _, values in series):
        raise ValueError("every series needs one value per day")
    totals = [sum(values[d] for _, values in series) for d in range(len(days))]
    maximum = nice_ceiling(max(totals, default=0))
    plot_width = WIDTH - LEFT
    plot_height = HEIGHT - BOTTOM - TOP
    baseline = HEIGHT - BOTTOM
    slot = plot_width / max(len(days), 1)
    gap = min(2.0, slot * 0.2)
    bars: list[Bar] = []
    for d, day in enumerate(days):
        bottom = float(baseline)
        for name, values in series:
            value = values[d]
            if value <= 0:
                continue
            height = value / maximum * plot_height
            bottom -= height
            x = round(LEFT + d * slot + gap / 2, 2)
            bars.append(Bar(x, round(bottom, 2), round(slot - gap, 2), round(height, 2), name, day.isoformat(), value))
    ticks = tuple(Tick(round(baseline - fraction * plot_height, 2), maximum * fraction) for fraction in (0, 0.5, 1))
    # About six day labels whatever the range, always the first day.
    every = max(1, math.ceil(len(days) / 6))
    labels = tuple(
        AxisLabel(round(LEFT + d * slot + slot / 2, 2), day.strftime("%b %-d"))
        for d, day in enumerate(days)
        if d % every == 0
    )
    return BarChart(WIDTH, HEIGHT, baseline, LEFT, tuple(bars), ticks, labels, maximum)
