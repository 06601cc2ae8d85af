"""A redaction-pattern change racing an ingest, on real concurrent connections (PostgreSQL): no document masked
with the old patterns survives the change, whichever of the two comes first.

Each interleaving is held open on purpose: the first writer is stopped inside its transaction (the ingest after it
masked, or the change after it marked the tenant's conversations pending), the second is started and seen waiting
on a lock, and only then is the first let go. The old patterns here mask nothing, the new one masks the ticket
number: afterwards, and after the fold worker's rebuild, a search for the number finds nothing, while the message
is still found by its other words.

SQLite has one writer at a time, so the race cannot happen there."""

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection, connections
from django.test import Client
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

from search_app import fold_worker
from search_app import index as search_index
from search_app.models import SearchDocument
from sessions_app.models import Conversation
from sessions_app.tenancy import administration
from sessions_app.tenancy.api_keys import create_api_key

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL"),
]
SECRET = "orchid7731"
NEW_PATTERNS = [r"\borchid\d+\b"]
WAIT = 60  # seconds: a step that never comes fails the test instead of hanging it


def _body(conversation_id: str) -> dict[str, Any]:
    messages = [
        ModelRequest(parts=[UserPromptPart(f"Open ticket {SECRET} for the lighthouse keeper.")]),
        ModelResponse(parts=[TextPart(f"Ticket {SECRET} is open for the lighthouse keeper.")]),
    ]
    return {
        "conversation_id": conversation_id,
        "run_id": f"{conversation_id}-run",
        "step": 1,
        "messages": ModelMessagesTypeAdapter.dump_python(messages, mode="json"),
    }


@pytest.fixture
def api(tenant):
    _, raw = create_api_key(tenant, "server")

    def post(conversation_id: str) -> int:
        response = Client().post(
            "/api/v1/snapshots",
            json.dumps(_body(conversation_id)),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
        return response.status_code

    def found(q: str) -> int:
        response = Client().get("/api/v1/search", {"q": q, "scope": "tenant"}, HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert response.status_code == 200, response.content
        body = response.json()
        return len(body["results"]) + body["total_matches"]

    return post, found


def _on_own_connection[T](act: Callable[[], T]) -> Callable[[], T]:
    def run() -> T:
        try:
            return act()
        finally:
            connections.close_all()  # this thread's connection

    return run


def _waiting_on_a_lock() -> bool:
    """Whether another backend of this database waits on a heavyweight lock (row, advisory or relation)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock')"
        )
        return bool(cursor.fetchone()[0])


def _seen_waiting(second: Future[Any]) -> bool:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and not second.done():
        if _waiting_on_a_lock():
            return True
        time.sleep(0.05)
    return False


def _held(monkeypatch: pytest.MonkeyPatch, name: str) -> tuple[threading.Event, threading.Event]:
    """Wrap search_index.<name> so that its first call, once done, says so and waits to be let go."""
    done, let_go = threading.Event(), threading.Event()
    real = getattr(search_index, name)

    def held(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if not done.is_set():
            done.set()
            assert let_go.wait(WAIT)
        return result

    monkeypatch.setattr(search_index, name, held)
    return done, let_go


def _nothing_masked_with_old_patterns(tenant, found: Callable[[str], int]) -> None:
    fold_worker.run_pass()
    for query in (SECRET, "orchid*", f'"ticket {SECRET}"'):
        assert found(query) == 0, query
    assert not SearchDocument.objects.filter(tenant=tenant, terms__contains=SECRET).exists()
    assert found("lighthouse keeper") > 0  # the messages are indexed, the number masked


def test_a_change_waits_for_an_ingest_that_masked_with_the_old_patterns(tenant, api, monkeypatch):
    post, found = api
    assert post("c-before") == 201 and found(SECRET) > 0  # the old (empty) patterns mask nothing
    masked, let_go = _held(monkeypatch, "_masking_rules")
    with ThreadPoolExecutor(2) as pool:
        ingest = pool.submit(_on_own_connection(lambda: post("c-racing")))
        assert masked.wait(WAIT)  # the ingest masked with the old patterns and has not committed
        change = pool.submit(
            _on_own_connection(lambda: administration.set_redaction_patterns(tenant, NEW_PATTERNS, actor=None))
        )
        waited = _seen_waiting(change)
        let_go.set()
        assert ingest.result(WAIT) == 201
        change.result(WAIT)
    _nothing_masked_with_old_patterns(tenant, found)
    assert waited, "the change did not wait for the ingest's transaction"


def test_an_ingest_after_a_change_masks_with_the_new_patterns(tenant, api, monkeypatch):
    post, found = api
    assert post("c-before") == 201 and found(SECRET) > 0
    marked, let_go = _held(monkeypatch, "tenant_patterns_changed")
    with ThreadPoolExecutor(2) as pool:
        change = pool.submit(
            _on_own_connection(lambda: administration.set_redaction_patterns(tenant, NEW_PATTERNS, actor=None))
        )
        assert marked.wait(WAIT)  # the change wrote the patterns and has not committed
        ingest = pool.submit(_on_own_connection(lambda: post("c-racing")))
        waited = _seen_waiting(ingest)
        let_go.set()
        change.result(WAIT)
        assert ingest.result(WAIT) == 201
    # Indexed at once under the new patterns: the change could not mark a conversation it did not see.
    conversation = Conversation.objects.get(tenant=tenant, external_id="c-racing")
    racing = SearchDocument.objects.filter(tenant=tenant, conversation_id=conversation.pk)
    assert racing.exists() and not racing.filter(terms__contains=SECRET).exists()
    _nothing_masked_with_old_patterns(tenant, found)
    assert waited, "the ingest did not wait for the change's transaction"
