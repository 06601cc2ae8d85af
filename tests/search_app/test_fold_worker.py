"""The fast state is the state users are in: an import folds what it wrote before it returns, and the fold worker (a
process of its own) finishes whatever a killed worker left, from the database; one worker per tenant at a time."""

import json
import os
import subprocess
import sys
import textwrap
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from pydantic_ai.messages import ModelMessagesTypeAdapter

from search_app import blocks, fold_worker, folding
from search_app.models import PostingBlock, SearchDocument, UnfoldedDocument
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.citus_mode import CITUS_TESTS
from tests.search_app.factories import make_conversation_with


def _export(tmp_path, conversations: int):
    history = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    lines = [
        {"conversation_id": f"c-{i}", "run_id": f"r-{i}", "agent": "w", "state": "complete", "messages": history}
        for i in range(conversations)
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


@pytest.mark.django_db(transaction=True)
def test_an_import_leaves_no_unfolded_document(tenant, tmp_path, settings):
    settings.SESSIONDESK_SEARCH_FOLD_INLINE = False  # as on PostgreSQL: no commit folds in process
    out = StringIO()
    call_command("import_sessions", "--tenant", tenant.slug, str(_export(tmp_path, 4)), stdout=out)
    documents = SearchDocument.objects.filter(tenant=tenant).count()
    assert documents > 0
    assert not UnfoldedDocument.objects.exists()
    assert sum(PostingBlock.objects.filter(tenant=tenant, term="weather").values_list("count", flat=True)) > 0
    assert f"Search index: {documents} document(s) folded." in out.getvalue()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the planner's statistics are PostgreSQL's")
@pytest.mark.skipif(CITUS_TESTS, reason="on Citus the shards' statistics are the workers'")
@pytest.mark.django_db(transaction=True)
def test_an_import_leaves_the_planner_statistics_of_what_it_loaded(tenant, tmp_path, settings):
    settings.SESSIONDESK_SEARCH_FOLD_INLINE = False
    call_command("import_sessions", "--tenant", tenant.slug, str(_export(tmp_path, 20)), stdout=StringIO())
    documents = SearchDocument.objects.filter(tenant=tenant).count()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text FROM search_app_searchdocument WHERE tenant_id = %s LIMIT 1", [tenant.id]
        )
        (partition,) = cursor.fetchone()
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)", [partition])
        assert cursor.fetchone() == (documents,)  # the tenant's partition counted as it is now
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'search_app_unfoldeddocument'::regclass")
        assert cursor.fetchone() == (0,)  # the tail counted empty, as the fold left it


def _counted(cursor, table: str, tenant_id: int) -> float:
    """What the planner's statistics count of the tenant's partition of `table`."""
    cursor.execute(f"SELECT tableoid::regclass::text FROM {table} WHERE tenant_id = %s LIMIT 1", [tenant_id])
    (partition,) = cursor.fetchone()
    cursor.execute("SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)", [partition])
    return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the planner's statistics are PostgreSQL's")
@pytest.mark.skipif(CITUS_TESTS, reason="on Citus the shards' statistics are the workers'")
@pytest.mark.django_db(transaction=True)
def test_what_the_api_writes_on_a_live_server_gets_statistics_from_the_fold_worker(client, tenant, settings):
    settings.SESSIONDESK_SEARCH_FOLD_INLINE = False  # as `manage.py serve` runs: the fold worker folds
    key = create_api_key(tenant, "server")[1]
    history = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    for i in range(60):  # past autovacuum's rule for the runs and snapshots too (50 rows, plus a tenth)
        body = {"conversation_id": f"c-{i}", "run_id": f"r-{i}", "state": "complete", "messages": history}
        response = client.post(
            "/api/v1/snapshots", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        assert response.status_code == 201, response.content
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")  # the writes counted now, not within the second
    assert fold_worker.run_pass().tenants == 1
    assert not UnfoldedDocument.objects.exists()
    documents = SearchDocument.objects.filter(tenant=tenant).count()
    with connection.cursor() as cursor:
        assert _counted(cursor, "search_app_searchdocument", tenant.id) == documents
        # What every write joins (a conversation's runs, their newest snapshots) is counted too.
        assert _counted(cursor, "sessions_app_run", tenant.id) == 60
        assert _counted(cursor, "sessions_app_snapshot", tenant.id) == 60
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'search_app_unfoldeddocument'::regclass")
        assert cursor.fetchone() == (0,)  # the tail counted empty, as the fold left it


@pytest.mark.django_db
def test_a_pass_that_dies_midway_is_finished_by_the_next(tenant, monkeypatch):
    make_conversation_with(tenant, [f"canary deploy {i}" for i in range(300)], external_id="c1")
    original = blocks.invert
    calls = []

    def dies_on_the_second_batch(rows):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")  # not an Exception: nothing in the worker catches it
        return original(rows)

    monkeypatch.setattr(blocks, "invert", dies_on_the_second_batch)
    monkeypatch.setattr(folding, "FOLD_BATCH", 100)
    with pytest.raises(KeyboardInterrupt):
        fold_worker.run_pass()
    assert UnfoldedDocument.objects.count() == 200  # the first batch committed, the second rolled back
    monkeypatch.setattr(blocks, "invert", original)
    assert fold_worker.run_pass().tenants == 1
    assert not UnfoldedDocument.objects.exists()
    assert sum(PostingBlock.objects.filter(term="canary").values_list("count", flat=True)) == 300


_HOLDER = textwrap.dedent(
    """
    import sys, time, psycopg
    with psycopg.connect(sys.argv[1], autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s, %s)", [int(sys.argv[2]), int(sys.argv[3])])
        conn.execute("BEGIN")
        conn.execute("DELETE FROM search_app_unfoldeddocument WHERE tenant_id = %s", [int(sys.argv[3])])
        print("holding", flush=True)
        time.sleep(120)
    """
)


def _wait_until_released(claim_class: int, tenant_id: int) -> None:
    """Wait for PostgreSQL to end a killed process's session, and with it its claim: the server notices the closed
    connection on its own time (under load, after the test's next pass had begun, so that pass skipped the tenant)."""
    deadline = time.monotonic() + 30
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = %s",
                [claim_class, tenant_id],
            )
            if cursor.fetchone()[0] == 0:
                return
            assert time.monotonic() < deadline, "the killed worker's claim was never released"
            time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_a_killed_workers_tenant_is_skipped_while_claimed_and_finished_by_the_next_start(tenant):
    if connection.vendor != "postgresql":
        pytest.skip("claims are PostgreSQL advisory locks")
    make_conversation_with(tenant, [f"rollback canary {i}" for i in range(50)], external_id="c1")
    params = connection.get_connection_params()
    dsn = " ".join(f"{key}={params[key]}" for key in ("host", "port", "dbname", "user") if params.get(key))
    # A worker midway: its claim held and its fold's deletes not committed, in a process of its own.
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, dsn, str(fold_worker._CLAIM_CLASS), str(tenant.id)], stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"holding"
        busy = fold_worker.run_pass()
        assert (busy.tenants, busy.skipped) == (0, 1)  # claimed: another worker leaves it alone
        assert UnfoldedDocument.objects.count() == 50
    finally:
        os.kill(holder.pid, 9)
        holder.wait(timeout=30)
    _wait_until_released(fold_worker._CLAIM_CLASS, tenant.id)
    resumed = fold_worker.run_pass()
    assert (resumed.tenants, resumed.skipped) == (1, 0)
    assert not UnfoldedDocument.objects.exists()
    assert sum(PostingBlock.objects.filter(term="canary").values_list("count", flat=True)) == 50
