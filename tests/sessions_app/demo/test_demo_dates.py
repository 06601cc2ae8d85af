"""B1: the demo is seeded relative to today, so the overview's default window (the last 30 days) shows it."""

from datetime import UTC, date, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sessions_app.demo.plans import DEMO_EPOCH, demo_start, generate_conversations
from sessions_app.demo.scenarios import demo_payloads


@given(st.dates(min_value=date(2000, 1, 1), max_value=date(2999, 12, 31)), st.integers(min_value=1, max_value=96))
def test_every_generated_conversation_starts_in_the_last_30_days_and_before_today(today, count):
    midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
    plans = generate_conversations(count, seed=0, start=demo_start(today, count))
    starts = [plan.started_at for plan in plans]
    assert min(starts) >= midnight - timedelta(days=30)
    assert max(starts) < midnight - timedelta(hours=12)  # a day's runs fit before today


def test_without_a_start_plans_stay_at_the_fixed_epoch():
    assert generate_conversations(1, seed=0)[0].started_at == DEMO_EPOCH


def test_the_demo_payloads_carry_times_of_the_days_before_today():
    payloads = demo_payloads(3, seed=1, today=date(2031, 7, 15))
    stamps = {
        part["timestamp"][:10]
        for tenant in payloads.values()
        for payload in tenant
        for message in payload["messages"]
        for part in message.get("parts", [])
        if part.get("timestamp")
    }
    assert stamps and all("2031-07-01" <= stamp < "2031-07-15" for stamp in stamps), stamps
