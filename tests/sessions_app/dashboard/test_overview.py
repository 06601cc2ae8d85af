"""The tenant overview counts runs, repairs, interrupted calls, tokens and agents per day, in the database."""

import json
import re
from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.dashboard.overview import tenant_overview
from sessions_app.models import Run, RunState, TranscriptEntry
from sessions_app.models.audit import RunVerdict

pytestmark = pytest.mark.django_db

DAY = date(2026, 1, 5)  # the fixture plans' first run starts then


def _stored_tokens(tenant, key: str) -> int:
    total = 0
    for data in TranscriptEntry.objects.filter(tenant=tenant, summary_artifact=False).values_list(
        "message__data", flat=True
    ):
        message = json.loads(data)
        if message["kind"] == "response":
            total += message["usage"][key]
    return total


def _runs_by_day(tenant) -> dict[date, int]:
    days: dict[date, int] = {}
    for started in Run.objects.filter(tenant=tenant).values_list("started_at", flat=True):
        days[started.date()] = days.get(started.date(), 0) + 1
    return days


def test_the_overview_counts_every_run_verdict_and_token_of_the_tenant_only(world):
    days = _runs_by_day(world.acme)
    overview = tenant_overview(world.acme, min(days), max(days))
    assert overview.runs == Run.objects.filter(tenant=world.acme).count() == 4
    assert {day.day: day.runs for day in overview.days if day.runs} == days
    stored = dict(RunVerdict.objects.filter(tenant=world.acme).values_list("run__run_id", "verdict"))
    assert sum(sum(day.runs_by_verdict.values()) for day in overview.days) == len(stored)
    for verdict in set(stored.values()):
        assert sum(day.runs_by_verdict.get(verdict, 0) for day in overview.days) == list(stored.values()).count(verdict)
    assert overview.verdicts == sorted(set(stored.values()), key=overview.verdicts.index)
    assert overview.repaired == RunVerdict.objects.filter(tenant=world.acme, repair_count__gt=0).count() >= 1
    assert overview.interrupted == 1  # the deploy call of conv-deploy's third run
    assert overview.interrupted_tools == [("deploy", 1)]
    assert overview.tokens("input") == _stored_tokens(world.acme, "input_tokens") > 0
    assert overview.tokens("output") == _stored_tokens(world.acme, "output_tokens") > 0
    assert {(agent.name, agent.runs) for agent in overview.agents} == {("deploy_agent", 3), ("weather_agent", 1)}


def test_runs_outside_the_range_are_not_counted(world):
    first = min(_runs_by_day(world.acme))
    overview = tenant_overview(world.acme, first - timedelta(days=10), first - timedelta(days=1))
    assert len(overview.days) == 10
    assert overview.runs == overview.interrupted == overview.tokens("input") == 0
    assert overview.agents == [] and overview.interrupted_tools == [] and overview.repair_rate is None


def test_the_overview_is_seven_queries_however_many_runs(world):
    with CaptureQueriesContext(connection) as one:
        tenant_overview(world.acme, DAY - timedelta(days=30), DAY + timedelta(days=30))
    # Fifty more runs of the same tenant outside the range: still five queries, none of them counted.
    conversation = world.quiet
    Run.objects.bulk_create(
        Run(
            tenant=world.acme,
            conversation=conversation,
            run_id=f"old-{n}",
            agent_name="old_agent",
            state=RunState.COMPLETE,
            started_at=conversation.runs.first().started_at - timedelta(days=400 + n),
        )
        for n in range(50)
    )
    with CaptureQueriesContext(connection) as more:
        overview = tenant_overview(world.acme, DAY - timedelta(days=30), DAY + timedelta(days=30))
    assert len(one.captured_queries) == len(more.captured_queries) == 7  # and the two latency queries
    assert "old_agent" not in {agent.name for agent in overview.agents}


def test_the_page_draws_each_chart_with_its_numbers_as_a_table(world, as_role):
    response = as_role("support").get("/overview/?since=2026-01-01&until=2026-01-31")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('<svg class="chart"') == 5
    assert "style=" not in page
    for table in ("runs-table", "repairs-table", "interrupted-table", "tokens-table", "agents-table"):
        assert f'id="{table}"' in page
    row = re.search(r"<tr><th scope=\"row\">2026-01-05</th><td class=\"num\">1</td></tr>", page)
    assert row  # the interrupted deploy call, on its day
    total_input = _stored_tokens(world.acme, "input_tokens")
    assert f'<dd id="total-tokens">{total_input:,} in' in page
    assert '<rect class="s-interrupted-tool"' in page
    assert "weather_agent" in page and "conv-globex" not in page
    assert 'aria-current="page">Overview</a>' in page


def test_the_default_range_is_the_last_thirty_days(world, as_role):
    page = as_role("support").get("/overview/").content.decode()
    today = date.today()
    assert f'name="until" value="{today.isoformat()}"' in page
    assert f'name="since" value="{(today - timedelta(days=29)).isoformat()}"' in page
    assert page.count('<tr><th scope="row">') == 30 * 5  # a row per day in each chart's table


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("since=2026-02-31", "From: Enter a valid date."),
        ("until=nope", "Until: Enter a valid date."),
        ("since=2026-02-01&until=2026-01-01", "&#x27;From&#x27; must not be after &#x27;Until&#x27;."),
        ("since=2020-01-01&until=2026-01-01", "Choose at most 366 days."),
    ],
)
def test_a_bad_range_is_a_form_error(world, as_role, query, message):
    response = as_role("support").get(f"/overview/?{query}")
    assert response.status_code == 400
    assert message in response.content.decode()
    assert '<svg class="chart"' not in response.content.decode()


def test_an_outsider_sees_only_their_own_tenant(world, as_role):
    page = as_role("outsider").get("/overview/?since=2026-01-01&until=2026-01-31").content.decode()
    assert "weather_agent" not in page
    assert "deploy_agent" in page  # globex's own copy of the deploy plan


def test_names_from_the_data_are_escaped_in_charts_and_tables(world, as_role):
    Run.objects.create(
        tenant=world.acme,
        conversation=world.quiet,
        run_id="escaped-run",
        agent_name="<b>agent</b>",
        state=RunState.COMPLETE,
        started_at=world.quiet.runs.first().started_at,
    )
    page = as_role("support").get("/overview/?since=2026-01-01&until=2026-01-31").content.decode()
    assert "<b>agent</b>" not in page and "&lt;b&gt;agent&lt;/b&gt;" in page
    assert '<rect class="s-not-audited"' in page  # the run without a verdict is counted as such
