"""HTML for the overview's charts and their tables, built in Python from esc pieces.

A year of days is a few thousand bars and table cells: as template loops they cost several hundred
milliseconds, as joined strings a few. Bars are SVG rectangles positioned by attributes (the
Content-Security-Policy refuses inline styles); each carries a <title> with its day, series and value.
"""

import math
from collections.abc import Sequence

from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

from sessions_app.dashboard.bar_charts import BarChart
from sessions_app.dashboard.markup import esc


def number(value: float) -> str:
    """A value with thousands separators and no needless decimals; below one, two significant digits, so a
    day's cost in dollars ($0.0093) or an axis tick of $0.02 never reads "0.0"."""
    if float(value).is_integer():
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:,.1f}"
    decimals = 1 - math.floor(math.log10(abs(value)))
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def percent(fraction: float | None) -> str:
    """A share: "12.5 %", or a dash when there was nothing to share."""
    return "—" if fraction is None else f"{fraction * 100:.1f} %"


def svg_chart(chart: BarChart, chart_id: str, title: str) -> SafeString:
    empty = "" if chart.bars else ": nothing in this range"
    pieces = [
        f'<svg class="chart" viewBox="0 0 {chart.width} {chart.height}" role="img" '
        f'aria-labelledby="{esc(chart_id)}-title"><title id="{esc(chart_id)}-title">{esc(title)}{empty}</title>'
    ]
    for tick in chart.ticks:
        pieces.append(
            f'<line class="grid" x1="{chart.left}" x2="{chart.width}" y1="{tick.y}" y2="{tick.y}"/>'
            f'<text class="tick" x="{chart.left - 4}" y="{tick.y}" text-anchor="end" dominant-baseline="middle">'
            f"{number(tick.value)}</text>"
        )
    # Per series once, not per bar: its class and its esc name.
    series = {bar.series: (esc(slugify(bar.series)), esc(bar.series)) for bar in chart.bars}
    for bar in chart.bars:
        slug, name = series[bar.series]
        pieces.append(
            f'<rect class="s-{slug}" x="{bar.x}" y="{bar.y}" width="{bar.width}" height="{bar.height}">'
            f"<title>{esc(bar.label)} · {name}: {number(bar.value)}</title></rect>"
        )
    for label in chart.labels:
        pieces.append(
            f'<text class="tick" x="{label.x}" y="{chart.height - 4}" text-anchor="middle">{esc(label.text)}</text>'
        )
    pieces.append("</svg>")
    return mark_safe("".join(pieces))  # noqa: S308  # every value above went through _e or is a number


def number_table(
    table_id: str, headers: Sequence[str], rows: Sequence[tuple[str, Sequence[float | str]]]
) -> SafeString:
    """A table of a row header (the day) and numbers (text cells are shown as they are)."""
    head = "".join(f'<th scope="col" class="num">{esc(h)}</th>' for h in headers[1:])
    body = "".join(
        f'<tr><th scope="row">{esc(label)}</th>'
        + "".join(f'<td class="num">{esc(c) if isinstance(c, str) else number(c)}</td>' for c in cells)
        + "</tr>"
        for label, cells in rows
    )
    return mark_safe(  # noqa: S308  # every value above went through _e
        f'<div class="table-wrap"><table id="{esc(table_id)}"><thead><tr><th scope="col">{esc(headers[0])}</th>'
        f"{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )
