"""Eight writers on real connections post continuations to conversations whose runs wait for approval, two
answering runs per waiting call: no 5xx, and every decision is stored exactly once, by one of its answers."""

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.db import connection
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import RuntimeSpan, RunVerdict
from sessions_app.tenancy.api_keys import create_api_key
from tests.sessions_app.audit.test_approvals_cost import answer, wait

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL's row locks"),
]
WRITERS = 8


def test_concurrent_continuations_store_each_decision_once(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    for n in range(WRITERS):
        wait(tenant, f"c{n}", f"c{n}-wait", call_id=f"call-{n}")
    bodies = []
    for n in range(WRITERS):
        for side, minutes in (("a", 1), ("b", 2)):
            payload = answer(f"c{n}", f"c{n}-{side}", call_id=f"call-{n}", minutes=minutes)
            bodies.append(
                {
                    "conversation_id": payload.conversation_id,
                    "run_id": payload.run_id,
                    "step": 1,
                    "started_at": payload.started_at.isoformat(),
                    "messages": ModelMessagesTypeAdapter.dump_python(payload.messages, mode="json"),
                }
            )

    def post(body: dict) -> int:
        with httpx.Client(timeout=60) as client:
            response = client.post(
                f"{live_server.url}/api/v1/snapshots",
                content=json.dumps(body),
                headers={"Authorization": f"Bearer {key}"},
            )
            return response.status_code

    with ThreadPoolExecutor(WRITERS) as pool:
        codes = list(pool.map(post, bodies))
    assert all(code < 500 for code in codes), codes
    spans = RuntimeSpan.objects.filter(tenant=tenant, kind=RuntimeSpan.Kind.APPROVAL_PENDING)
    assert spans.count() == WRITERS
    for span in spans.select_related("run"):
        n = span.run.run_id.removeprefix("c").removesuffix("-wait")
        assert span.facts["state"] == "approved"
        assert span.facts["decided_in_run"] in {f"c{n}-a", f"c{n}-b"}
        assert RunVerdict.objects.get(run=span.run).verdict != Verdict.WAITING
