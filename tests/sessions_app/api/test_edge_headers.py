"""What every answer says about itself at the edge: API answers hold a tenant's data and are never cached; every
503 says when to retry; /healthz answers for the database, not only for the process."""

import json

import pytest
from django.db import OperationalError
from django.db.backends.utils import CursorWrapper
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.payloads import IngestError
from sessions_app.models import Snapshot
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db


def _no_store(response) -> bool:
    return {"no-store", "private"} <= {part.strip() for part in response["Cache-Control"].split(",")}


def test_api_answers_holding_tenant_data_are_never_cached(client, tenant):
    key = create_api_key(tenant, "server")[1]
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    answers = [
        client.get("/api/v1/search?q=weather&scope=tenant", **headers),
        client.get("/api/v1/search?q=weather&scope=tenant"),  # refused: 401
        client.get("/api/v1/search?limit=99&q=x&scope=tenant", **headers),  # refused: 400
        client.post("/v1/traces", b"\x00", content_type="application/x-protobuf", **headers),
    ]
    assert [answer.status_code for answer in answers][:3] == [200, 401, 400]
    assert all(_no_store(answer) for answer in answers)


def test_a_busy_store_answers_503_with_retry_after_and_writes_nothing(client, tenant, monkeypatch):
    key = create_api_key(tenant, "server")[1]

    def busy(*args, **kwargs):
        raise IngestError("The store is busy; nothing was written. Try again.", status=503)

    monkeypatch.setattr("sessions_app.api.snapshots.ingest_snapshots", busy)
    messages = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    before = row_counts()
    response = client.post(
        "/api/v1/snapshots",
        json.dumps({"conversation_id": "c-1", "run_id": "r-1", "messages": messages}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "busy" in response.json()["error"]
    assert row_counts() == before and not Snapshot.objects.exists()


def test_healthz_says_ok_while_the_database_answers(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.content == b"ok"


def test_healthz_answers_503_with_retry_after_when_the_database_does_not(client, monkeypatch):
    def down(self, sql, params=None):
        raise OperationalError("connection refused")

    monkeypatch.setattr(CursorWrapper, "execute", down)
    response = client.get("/healthz")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.content == b"database unavailable"
