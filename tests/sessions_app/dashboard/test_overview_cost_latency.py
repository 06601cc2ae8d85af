"""The overview's cost per day and per agent (unknown models say "no price", never $0), its latency percentiles
(run durations in the database, model steps over the range's facts), and the onboarding panel of an empty tenant."""

from datetime import UTC, date, datetime, timedelta

import pytest

from sessions_app.dashboard.latency import duration_text, percentile, percentiles, step_latencies
from sessions_app.dashboard.overview import tenant_overview
from sessions_app.models import Run, TranscriptEntry
from sessions_app.transcripts.prices import format_cost
from tests.factories import make_member, make_tenant


def test_percentiles_interpolate_as_percentile_cont_does():
    assert percentile([4, 1, 3, 2], 0.5) == 2.5
    assert percentile([1, 2, 3, 4], 0.95) == pytest.approx(3.85)
    assert percentile([7], 0.95) == 7
    assert percentile([], 0.5) is None
    assert percentiles([]).p50_label == "—"


def test_durations_read_as_a_person_reads_them():
    assert [duration_text(ms) for ms in (850, 7200, 210_000, 4_320_000)] == ["850 ms", "7.2 s", "3.5 min", "1.2 h"]


def _at(seconds: int) -> str:
    return (datetime(2026, 1, 5, 9, tzinfo=UTC) + timedelta(seconds=seconds)).isoformat()


def test_a_step_runs_from_its_request_to_its_response_per_conversation():
    rows = [
        ("c1", {"kind": "request", "parts": [{"part_kind": "user-prompt", "timestamp": _at(0)}]}),
        ("c1", {"kind": "response", "model_name": "m", "timestamp": _at(2)}),
        ("c1", {"kind": "request", "parts": [{"part_kind": "tool-return", "timestamp": _at(5)}]}),
        ("c1", {"kind": "response", "model_name": "m", "timestamp": _at(9)}),
        ("c1", {"kind": "response", "model_name": "m", "timestamp": _at(12)}),  # no request before it: left out
        ("c2", {"kind": "response", "model_name": "n", "timestamp": _at(20)}),  # another conversation's first row
        ("c2", {"kind": "request", "parts": [{"part_kind": "user-prompt", "timestamp": _at(30)}]}),
        ("c2", {"kind": "response", "model_name": "n", "timestamp": _at(29)}),  # before its request: left out
        ("c2", {"kind": "request", "parts": [{"part_kind": "user-prompt"}]}),  # untimed request
        ("c2", {"kind": "response", "model_name": "n"}),  # untimed response
    ]
    assert step_latencies(rows) == [("m", 2000.0), ("m", 4000.0)]


@pytest.mark.django_db
def test_cost_per_day_and_agent_add_up_the_runs_and_unknown_models_say_no_price(world, as_role):
    runs = Run.objects.filter(tenant=world.acme)
    first = min(r.started_at.date() for r in runs)
    last = max(r.started_at.date() for r in runs)
    # Give one run a priced cost, as genai-prices would have: the rest stay unpriced (FunctionModel has no price).
    priced = runs.order_by("pk").first()
    Run.objects.filter(pk=priced.pk).update(cost_micro_usd=12_345, unpriced_steps=0)
    overview = tenant_overview(world.acme, first, last)
    steps = sum(r.model_step_count for r in runs.all())
    unpriced = sum(r.unpriced_steps for r in runs.all())
    assert sum(day.cost_micro_usd for day in overview.days) == 12_345
    assert overview.cost == format_cost(12_345, unpriced, steps) != "$0.0000"
    by_agent = {agent.name: agent for agent in overview.agents}
    assert by_agent[priced.agent_name].cost_micro_usd == 12_345
    others = [agent for name, agent in by_agent.items() if name != priced.agent_name]
    assert others and all(agent.cost == "no price" for agent in others if agent.model_steps)
    page = as_role("support").get(f"/overview/?since={first}&until={last}").content.decode()
    assert 'id="cost-chart-title"' in page and 'id="cost-table"' in page
    assert "no price" in page and f'<dd id="total-cost">{overview.cost}</dd>' in page


@pytest.mark.django_db
def test_latency_percentiles_are_those_of_the_range_runs_and_steps(world):
    runs = Run.objects.filter(tenant=world.acme)
    first = min(r.started_at.date() for r in runs)
    overview = tenant_overview(world.acme, first - timedelta(days=1), first + timedelta(days=40))
    durations = [float(ms) for ms in runs.values_list("duration_ms", flat=True)]
    # On PostgreSQL percentile_cont in the database, on SQLite the pure function: the same numbers.
    assert overview.run_durations.count == len(durations)
    assert overview.run_durations.p50 == pytest.approx(percentile(durations, 0.5))
    assert overview.run_durations.p95 == pytest.approx(percentile(durations, 0.95))
    rows = (
        TranscriptEntry.objects.filter(tenant=world.acme, summary_artifact=False)
        .order_by("conversation_id", "position")
        .values_list("conversation_id", "facts")
    )
    expected = step_latencies(rows)
    assert expected and overview.step_latencies.count == len(expected)
    assert overview.step_latencies.p95 == pytest.approx(percentile([ms for _, ms in expected], 0.95))
    assert sum(row.steps.count for row in overview.model_latencies) == len(expected)
    # A range before every run: no percentile, not zero.
    empty = tenant_overview(world.acme, first - timedelta(days=20), first - timedelta(days=10))
    assert empty.run_durations.p50 is None and empty.step_latencies.p95 is None and empty.has_data


@pytest.mark.django_db
def test_an_empty_tenant_is_shown_how_to_start_with_the_real_urls(client):
    tenant = make_tenant("fresh", "Fresh")
    user = make_member(tenant, "admin", "fresh-admin")
    client.force_login(user)
    page = client.get("/overview/").content.decode()
    assert "three steps to your first conversation" in page
    assert 'href="/settings/api-keys/"' in page
    assert "http://testserver/api/v1/snapshots" in page
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://testserver" in page and "OTEL_EXPORTER_OTLP_HEADERS" in page
    assert "http://testserver/v1/traces" in page


@pytest.mark.django_db
def test_a_tenant_with_conversations_sees_no_onboarding(world, as_role):
    page = as_role("support").get(f"/overview/?since={date(2026, 1, 1)}&until={date(2026, 1, 31)}").content
    assert b"three steps to your first conversation" not in page
