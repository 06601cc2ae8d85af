"""The edge's last lines: a chunked body is refused (411) rather than read as empty, a request past the deadline
answers 503 with Retry-After and frees its worker, and pages holding tenant data are never cached."""

import signal
import time

import pytest
from django.db import connection
from django.http import HttpResponse
from django.test import RequestFactory
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.api.middleware import EdgeMiddleware
from sessions_app.models import Snapshot
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.factories import make_member
from tests.rowcounts import row_counts
from tests.security.test_ingest_caps import post_snapshot

pytestmark = pytest.mark.django_db


def test_a_chunked_snapshot_is_refused_with_411_and_nothing_is_written(client, tenant):
    key = create_api_key(tenant, "server")[1]
    messages = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    before = row_counts()
    response = post_snapshot(client, key, messages, HTTP_TRANSFER_ENCODING="chunked")
    assert response.status_code == 411 and "Content-Length" in response.json()["error"]
    assert row_counts() == before and not Snapshot.objects.exists()


def test_a_chunked_otlp_export_is_refused_with_411(client, tenant):
    key = create_api_key(tenant, "server")[1]
    response = client.post(
        "/v1/traces", b"\x0a\x00", content_type="application/x-protobuf",
        HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_TRANSFER_ENCODING="chunked",
    )
    assert response.status_code == 411


def test_a_page_for_a_signed_in_member_is_never_cached(client, tenant):
    member = make_member(tenant, role="admin")
    client.force_login(member)
    page = client.get("/")
    assert page.status_code in (200, 302)
    assert {"no-store", "private"} <= {part.strip() for part in page["Cache-Control"].split(",")}
    client.logout()
    assert "no-store" not in client.get("/accounts/login/").get("Cache-Control", "")


def test_a_request_past_the_deadline_answers_503_with_retry_after(settings):
    settings.SESSIONDESK_REQUEST_DEADLINE_SECONDS = 0.05
    served: list[str] = []

    def stuck(request):
        time.sleep(30)  # interrupted by the deadline's timer, never finishing
        served.append("stuck")
        return HttpResponse("late")

    for path in ("/api/v1/search", "/conversations/"):
        response = EdgeMiddleware(stuck)(RequestFactory().get(path))
        assert response.status_code == 503 and response["Retry-After"] == "5"
        assert b"took longer than the server allows" in response.content
    assert served == []
    # The worker serves the next request, and the timer is disarmed once a request answers in time.
    settings.SESSIONDESK_REQUEST_DEADLINE_SECONDS = 5
    assert EdgeMiddleware(lambda request: HttpResponse("ok"))(RequestFactory().get("/healthz")).status_code == 200

    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    connection.ensure_connection()
