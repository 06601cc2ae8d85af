"""Eight writers setting one author's score on one target at the same moment, each on its own thread and database
connection, leave exactly one row holding one of the values written, answer no error, and record one audit event
per write (PostgreSQL, real concurrent connections). The eight are held until every one has found no row to
update, so all eight insert at once: one insert wins and the seven others take `set_score`'s retry (the unique
key refuses them; they update the winner's row instead). Without the retry seven of them answer 500.

SQLite has one writer at a time (`BEGIN IMMEDIATE`), so the race cannot happen there; its in-memory test
database, shared between threads, refuses a second writer outright instead of waiting, so these run on
PostgreSQL only, like the queue's concurrency tests."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import IntegrityError, connection, connections
from django.test import Client

from sessions_app.models import AuditEvent, Conversation, Score
from sessions_app.review import scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_tenant
from tests.sessions_app.dashboard.conftest import ingest_plan, quiet_plan

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL"),
]
WRITERS = 8
VALUES = [float(n) for n in range(1, WRITERS + 1)]  # each writer its own value, all in the score's range


@pytest.fixture
def acme():
    tenant = make_tenant("acme", "Acme")
    conversation = ingest_plan(tenant, quiet_plan(), "conv-0")
    scores.define_score(tenant, ScoreShape("helpfulness", ScoreKind.NUMERIC, 0, 10), actor="admin")
    return tenant, conversation


@pytest.fixture
def inserts_at_once(monkeypatch):
    """Every writer's insert waits until all eight are about to insert; counts the inserts the unique key refused.
    A barrier with a timeout: a writer that never arrives fails the test instead of hanging."""
    refused: list[int] = []
    arrived = threading.Barrier(WRITERS, timeout=60)
    real_create = Score.objects.create

    def create(**fields):
        arrived.wait()
        try:
            return real_create(**fields)
        except IntegrityError:
            refused.append(1)
            raise

    monkeypatch.setattr(Score.objects, "create", create)
    return refused


def _at_once(act):
    start = threading.Barrier(WRITERS, timeout=60)

    def run(index):
        try:
            start.wait()
            return act(index)
        finally:
            connections.close_all()  # this thread's own connection

    with ThreadPoolExecutor(WRITERS) as pool:
        return list(pool.map(run, range(WRITERS)))


def _one_row_of_a_written_value(tenant, author: str) -> Score:
    rows = list(Score.objects.filter(tenant=tenant))
    assert len(rows) == 1
    assert rows[0].author == author and rows[0].target == "c"
    assert rows[0].number in VALUES
    return rows[0]


def test_eight_writers_of_one_score_leave_one_row_and_eight_events(acme, inserts_at_once):
    tenant, conversation = acme

    def write(index):
        mine = Conversation.objects.get(pk=conversation.pk)  # read on this thread's connection
        return scores.set_score(tenant, mine, Target(), "helpfulness", VALUES[index], author="user:alice")

    written = _at_once(write)
    row = _one_row_of_a_written_value(tenant, "user:alice")
    assert {score.pk for score in written} == {row.pk}
    assert AuditEvent.objects.filter(tenant=tenant, event_class="score_set", actor="user:alice").count() == WRITERS
    assert len(inserts_at_once) == WRITERS - 1  # the seven losers went through the retry


def test_eight_posts_of_one_score_at_once_answer_201_and_leave_one_row(acme, inserts_at_once):
    tenant, _ = acme
    key, raw = create_api_key(tenant, "server", "eval-job")

    def post(index):
        client = Client(headers={"Authorization": f"Bearer {raw}"})
        body = {"conversation_id": "conv-0", "name": "helpfulness", "value": VALUES[index]}
        response = client.post("/api/v1/scores", json.dumps(body), content_type="application/json")
        return response.status_code, response.json()

    answers = _at_once(post)
    assert [status for status, _ in answers] == [201] * WRITERS
    row = _one_row_of_a_written_value(tenant, f"api-key:{key.prefix}")
    assert {body["score_id"] for _, body in answers} == {row.pk}
    assert {body["number"] for _, body in answers} <= set(VALUES)
    assert (
        AuditEvent.objects.filter(tenant=tenant, event_class="score_set", actor=f"api-key:{key.prefix}").count()
        == WRITERS
    )
    assert len(inserts_at_once) == WRITERS - 1
