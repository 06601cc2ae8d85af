"""The overview's bar geometry: stacked per day, scaled to a readable maximum, inside the SVG box."""

from datetime import date

import pytest

from sessions_app.dashboard.bar_charts import HEIGHT, WIDTH, days_between, nice_ceiling, stacked_bars
from sessions_app.dashboard.overview_html import number


def test_days_between_includes_both_ends_and_is_empty_when_reversed():
    assert days_between(date(2026, 1, 30), date(2026, 2, 2)) == [
        date(2026, 1, 30),
        date(2026, 1, 31),
        date(2026, 2, 1),
        date(2026, 2, 2),
    ]
    assert days_between(date(2026, 2, 2), date(2026, 2, 1)) == []


@pytest.mark.parametrize(
    ("value", "ceiling"), [(0, 1), (1, 1), (3, 5), (7, 10), (11, 20), (24, 25), (26, 50), (1234, 2000)]
)
def test_the_axis_maximum_is_a_round_number_at_or_above_the_largest_stack(value, ceiling):
    assert nice_ceiling(value) == ceiling


def test_series_stack_bottom_up_and_the_tallest_stack_reaches_its_share_of_the_axis():
    days = days_between(date(2026, 1, 1), date(2026, 1, 3))
    chart = stacked_bars(days, [("ready", [2, 0, 1]), ("stuck", [3, 0, 0])])
    assert chart.maximum == 5
    assert [(bar.series, bar.label, bar.value) for bar in chart.bars] == [
        ("ready", "2026-01-01", 2),
        ("stuck", "2026-01-01", 3),
        ("ready", "2026-01-03", 1),
    ]
    ready, stuck, third = chart.bars
    assert ready.y + ready.height == pytest.approx(chart.baseline)
    assert stuck.y + stuck.height == pytest.approx(ready.y)  # on top of the first
    assert stuck.y == pytest.approx(chart.baseline - (ready.height + stuck.height))
    assert ready.height / stuck.height == pytest.approx(2 / 3)
    for bar in chart.bars:
        assert chart.left <= bar.x and bar.x + bar.width <= WIDTH and 0 <= bar.y and bar.y + bar.height <= HEIGHT
    assert third.x > ready.x


def test_a_chart_of_nothing_has_no_bars_but_keeps_its_axis_and_labels():
    days = days_between(date(2026, 1, 1), date(2026, 1, 30))
    chart = stacked_bars(days, [("input", [0] * 30)])
    assert chart.bars == ()
    assert [tick.value for tick in chart.ticks] == [0, 0.5, 1]
    assert chart.labels[0].text == "Jan 1" and 4 <= len(chart.labels) <= 6


def test_a_series_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="one value per day"):
        stacked_bars([date(2026, 1, 1)], [("ready", [1, 2])])


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (1234, "1,234"),
        (2.5, "2.5"),
        (1234.56, "1,234.6"),
        (0.5, "0.5"),
        (0.02, "0.02"),
        (0.0785, "0.079"),
        (0.0093, "0.0093"),
        (0.996, "1"),
    ],
)
def test_chart_numbers_below_one_keep_two_significant_digits(value, text):
    """A day's cost in dollars is often a fraction of a cent: its tick and table cell must not read 0.0."""
    assert number(value) == text
