"""Faults (PostgreSQL): the database connections are killed (pg_terminate_backend) in the middle of an import and
of a burst of API writes. Nothing partial is stored, the API answers 503 JSON while its connection is gone, and
both recover by themselves (the next file, the next request reconnects)."""

import json
from io import StringIO

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest import service as ingest_service
from sessions_app.models import Conversation, Snapshot
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.rowcounts import row_counts

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="kills PostgreSQL backends"),
]


def body(conversation_id: str) -> dict:
    return {
        "conversation_id": conversation_id,
        "run_id": f"{conversation_id}-run",
        "messages": ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json"),
    }


# Every write attempt of one request or file is killed: the database stays away longer than ingestion retries.
ATTEMPTS = getattr(ingest_service, "WRITE_ATTEMPTS", 5)


class Killer:
    """An execute wrapper that terminates this connection's backend right before statements starting with
    `verb`: from the `after`-th one on, `kills` times (each reconnect is killed again, as if the server were down)."""

    def __init__(self, after: int, kills: int = 1, verb: str = "INSERT") -> None:
        self.remaining = after
        self.kills = kills
        self.verb = verb
        self.fired = 0
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        params.pop("context", None)
        self.killer = psycopg.connect(**params, autocommit=True)

    def __call__(self, execute, sql, params, many, context):
        if self.fired < self.kills and sql.lstrip().upper().startswith(self.verb):
            self.remaining -= 1
            if self.remaining <= 0:
                self.fired += 1
                pid = connection.connection.info.backend_pid
                self.killer.execute("SELECT pg_terminate_backend(%s::integer)", [pid])
        return execute(sql, params, many, context)


@pytest.fixture
def kill_once():
    made = []

    def make(after, kills=1, verb="INSERT"):
        made.append(Killer(after, kills, verb))
        return made[-1]

    yield make
    for killer in made:
        killer.killer.close()
    connection.close()


def test_an_import_whose_connection_dies_stores_nothing_of_that_file_and_the_next_files_import(
    tenant, tmp_path, kill_once
):
    paths = []
    for name in ("first", "killed", "last"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(body(f"conv-{name}")))
        paths.append(path)
    call_command("import_sessions", "--tenant", tenant.slug, str(paths[0]), stdout=StringIO())
    before = row_counts()
    killer = kill_once(after=3, kills=ATTEMPTS)
    err = StringIO()
    with connection.execute_wrapper(killer), pytest.raises(CommandError, match="1 of 2 file"):
        call_command("import_sessions", "--tenant", tenant.slug, str(paths[1]), str(paths[2]),
                     stdout=StringIO(), stderr=err)
    assert killer.fired and f"{paths[1]}: nothing imported" in err.getvalue()
    connection.close()
    stored = set(Conversation.objects.values_list("external_id", flat=True))
    assert stored == {"conv-first", "conv-last"}, "the killed file left nothing, the file after it imported"
    assert row_counts()["sessions_app.Conversation"] == before["sessions_app.Conversation"] + 1
    # Importing the failed file again, once the database is back, stores it whole.
    call_command("import_sessions", "--tenant", tenant.slug, str(paths[1]), stdout=StringIO())
    assert Conversation.objects.filter(external_id="conv-killed").exists()


def test_a_burst_of_api_writes_answers_503_while_the_connection_is_gone_and_recovers(client, tenant, kill_once):
    key = create_api_key(tenant, "server")[1]
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def post(conversation_id):
        return client.post("/api/v1/snapshots", json.dumps(body(conversation_id)), content_type="application/json",
                           **headers)

    statuses = {}
    for number in range(3):
        statuses[f"c-{number}"] = post(f"c-{number}").status_code
    killer = kill_once(after=2, kills=ATTEMPTS)
    with connection.execute_wrapper(killer):
        killed = post("c-killed")
    assert killer.fired == ATTEMPTS
    assert killed.status_code == 503 and killed["Content-Type"] == "application/json"
    assert "nothing was written" in killed.json()["error"]
    for number in range(3, 6):
        statuses[f"c-{number}"] = post(f"c-{number}").status_code
    assert set(statuses.values()) == {201}, statuses
    assert not Conversation.objects.filter(external_id="c-killed").exists()
    assert Snapshot.objects.count() == 6
    # The client retries the refused write: it is new (201), so nothing of it had been stored.
    assert post("c-killed").status_code == 201


def test_one_lost_connection_inside_a_write_is_retried_whole(client, tenant, kill_once):
    key = create_api_key(tenant, "server")[1]
    killer = kill_once(after=2, kills=1)
    with connection.execute_wrapper(killer):
        response = client.post("/api/v1/snapshots", json.dumps(body("c-1")), content_type="application/json",
                               HTTP_AUTHORIZATION=f"Bearer {key}")
    assert killer.fired == 1 and response.status_code == 201
    assert Snapshot.objects.count() == 1
    assert Conversation.objects.get().message_count == len(weather_messages())


def test_a_read_whose_connection_dies_answers_503_json_and_the_next_one_works(client, tenant, kill_once):
    key = create_api_key(tenant, "server")[1]
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    killer = kill_once(after=1, kills=1, verb="SELECT")
    with connection.execute_wrapper(killer):
        response = client.get("/api/v1/search?q=weather&scope=tenant", **headers)
    assert killer.fired == 1
    assert response.status_code == 503 and response["Retry-After"] and "error" in response.json()
    assert client.get("/api/v1/search?q=weather&scope=tenant", **headers).status_code == 200
