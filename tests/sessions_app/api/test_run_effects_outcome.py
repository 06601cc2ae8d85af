"""GET /api/v1/runs/<id>: a run's snapshots and its stored tool-effect ledger, from a real harness run; an effect
`started` and never ended after the run stopped says "outcome unknown after crash", an ended one its status."""

import httpx
import pytest
from pydantic_ai_harness.step_persistence import StepPersistence

from sessions_app.audit.ledger import OUTCOME_UNKNOWN, effect_outcome
from sessions_app.client.step_store import SessiondeskStepStore
from sessions_app.models import Run
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_agent


@pytest.mark.django_db(transaction=True)
def test_the_ledger_shows_each_effect_and_flags_the_unfinished_one(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    store = SessiondeskStepStore(live_server.url, key)
    weather_agent().run_sync(
        "Weather?", conversation_id="effects-1", capabilities=[StepPersistence(store=store, agent_name="w")]
    )
    run = Run.objects.get(tenant=tenant, conversation__external_id="effects-1")
    headers = {"Authorization": f"Bearer {key}"}
    # A call the process started and never finished (it crashed): only the `started` entry reached the ledger.
    posted = httpx.post(
        f"{live_server.url}/api/v1/tool-effects",
        json={"run_id": run.run_id, "tool_call_id": "call-charge", "tool_name": "charge_card", "status": "started"},
        headers=headers,
    )
    assert posted.status_code == 200, posted.text
    body = httpx.get(f"{live_server.url}/api/v1/runs/{run.run_id}", headers=headers).json()
    assert body["state"] == "complete" and body["conversation_id"] == "effects-1"
    assert [s["state"] for s in body["snapshots"]] and {s["state"] for s in body["snapshots"]} == {"complete"}
    outcomes = {effect["tool_call_id"]: effect["outcome"] for effect in body["tool_effects"]}
    assert outcomes == {"call-weather-1": "completed", "call-charge": OUTCOME_UNKNOWN}


def test_only_a_started_effect_of_a_stopped_run_is_of_unknown_outcome():
    assert effect_outcome("started", False, "complete") == OUTCOME_UNKNOWN
    assert effect_outcome("started", False, "interrupted") == OUTCOME_UNKNOWN
    assert effect_outcome("started", False, "running") == "started"  # it may still end
    assert effect_outcome("started", True, "complete") == "started"
    assert effect_outcome("failed", False, "complete") == "failed"


@pytest.mark.django_db
def test_another_tenant_s_run_is_a_404_like_a_missing_one(client, tenant, other_tenant):
    _, key = create_api_key(other_tenant, "server")
    Run.objects.create(
        tenant=tenant,
        conversation=tenant.conversations.create(external_id="c"),
        run_id="r-acme",
        started_at="2026-01-01T00:00:00Z",
    )
    headers = {"Authorization": f"Bearer {key}"}
    foreign = client.get("/api/v1/runs/r-acme", headers=headers)
    missing = client.get("/api/v1/runs/r-none", headers=headers)
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json()["error"] == missing.json()["error"].replace("r-none", "r-acme")
