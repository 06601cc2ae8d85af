"""A client key (the browser-facing kind) reads only conversations it wrote, through every read (context, search,
replay, run audit); it never writes to a conversation holding history another key wrote (403, nothing changes);
and replay authority is decided per run, so a client-written run cannot deny the owner's replay."""

import json

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.audit import evidence
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import RunVerdict
from sessions_app.tenancy.api_keys import create_api_key
from tests.rowcounts import row_counts
from tests.sessions_app.audit.audit_cases import mailer_history, outcome_receipt

pytestmark = pytest.mark.django_db(transaction=False)


def _body(conversation_id, run_id, prompt, **extra):
    messages = mailer_history(conversation_id, prompt)
    return {
        "conversation_id": conversation_id,
        "run_id": run_id,
        "agent": "mailer",
        "step": 1,
        "state": "complete",
        "messages": ModelMessagesTypeAdapter.dump_python(messages, mode="json"),
        **extra,
    }


def _post(client, raw, path, body):
    return client.post(path, json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}")


def _get(client, raw, path, **params):
    return client.get(path, params, HTTP_AUTHORIZATION=f"Bearer {raw}")


@pytest.fixture
def keys(tenant):
    return {kind: create_api_key(tenant, kind.split("-")[0]) for kind in ("server", "client", "client-other")}


@pytest.fixture
def written(client, tenant, keys):
    """c-server written by the server key (READY with its receipt), c-mine by the client key."""
    assert _post(client, keys["server"][1], "/api/v1/snapshots", _body("c-server", "r-server", "Send the invoice"))
    evidence.add_receipt(tenant, outcome_receipt("r-server"))
    response = _post(client, keys["client"][1], "/api/v1/snapshots", _body("c-mine", "r-mine", "Send the receipt"))
    assert response.status_code == 201, response.content
    return keys


def _same_as_missing(response, missing, named, missing_name):
    assert response.status_code == missing.status_code, response.content
    assert response.content.decode().replace(named, "X") == missing.content.decode().replace(missing_name, "X")


def test_a_client_key_reads_only_what_it_wrote_through_every_read(client, written):
    mine, other, server = written["client"][1], written["client-other"][1], written["server"][1]
    assert _get(client, mine, "/api/v1/conversations/c-mine/messages", around=0).status_code == 200
    assert _get(client, server, "/api/v1/conversations/c-server/messages", around=0).status_code == 200
    reads = {
        "context": lambda key, c: _get(client, key, f"/api/v1/conversations/{c}/messages", around=0),
        "search": lambda key, c: _get(client, key, "/api/v1/search", q="invoice", conversation_id=c),
        "replay": lambda key, c: _get(client, key, f"/api/v1/conversations/{c}/replay"),
        "run audit": lambda key, c: _get(client, key, f"/api/v1/runs/{c.replace('c-', 'r-')}/audit"),
        "conversation": lambda key, c: _get(client, key, f"/api/v1/conversations/{c}"),
        "run": lambda key, c: _get(client, key, f"/api/v1/runs/{c.replace('c-', 'r-')}"),
    }
    for name, read in reads.items():
        missing = read(mine, "c-nowhere")
        assert missing.status_code in (200, 404), name  # a search of nothing answers 200 with the message
        _same_as_missing(read(mine, "c-server"), missing, "server", "nowhere")
        _same_as_missing(read(other, "c-mine"), read(other, "c-nowhere"), "mine", "nowhere")
    listed = _get(client, mine, "/api/v1/conversations").json()["conversations"]
    assert [row["conversation_id"] for row in listed] == ["c-mine"]
    searched = _get(client, mine, "/api/v1/search", q="invoice", conversation_id="c-server").json()
    assert searched["results"] == [] and searched["total_matches"] == 0
    assert _get(client, mine, "/api/v1/search", q="receipt", conversation_id="c-mine").json()["results"]
    # A run of another writer's conversation, searched by run, is missing too.
    by_run = _get(client, mine, "/api/v1/search", q="invoice", scope="run", run_id="r-server").json()
    assert by_run["results"] == [] and "r-server" in by_run["message"]


def test_a_client_key_cannot_search_a_whole_tenant(client, written):
    response = _get(client, written["client"][1], "/api/v1/search", q="invoice", scope="tenant")
    assert response.status_code == 403
    assert "client key searches one conversation it wrote" in response.json()["error"]
    assert _get(client, written["server"][1], "/api/v1/search", q="invoice", scope="tenant").json()["results"]


def test_another_tenants_conversation_stays_404_for_its_client_keys(client, other_tenant, written):
    _, theirs = create_api_key(other_tenant, "client")
    read = _get(client, theirs, "/api/v1/conversations/c-mine/messages", around=0)
    _same_as_missing(read, _get(client, theirs, "/api/v1/conversations/c-no/messages", around=0), "mine", "no")
    assert read.status_code == 404


@pytest.mark.parametrize(
    ("writer", "conversation", "run"),
    [
        ("client", "c-server", "r-forged"),  # a new run appended to the server's conversation (started in 2999)
        ("client", "c-server", "r-server"),  # a later step of the server's own run
        ("client-other", "c-mine", "r-forged"),  # another client key's conversation
    ],
)
def test_a_client_key_never_writes_to_history_another_key_wrote(client, written, writer, conversation, run):
    before = row_counts()
    body = _body(conversation, run, "Wire the money", started_at="2999-01-01T00:00:00Z", step=2)
    response = _post(client, written[writer][1], "/api/v1/snapshots", body)
    assert response.status_code == 403
    assert f"conversation '{conversation}' holds history written by another key" in response.json()["error"]
    effect = {"run_id": run.replace("forged", "server"), "tool_call_id": "t-1", "tool_name": "x", "status": "started"}
    if conversation == "c-server":
        assert _post(client, written[writer][1], "/api/v1/tool-effects", effect).status_code == 403
    assert row_counts() == before


def test_a_client_key_keeps_writing_to_its_own_conversation(client, written):
    body = _body("c-mine", "r-mine-2", "Send it again", started_at="2999-01-01T00:00:00Z")
    assert _post(client, written["client"][1], "/api/v1/snapshots", body).status_code == 201


def test_a_client_written_run_is_quarantined_and_the_owners_replay_stays_ready(client, tenant, written):
    """The probe's forgery, written the one way still open: a client key starts the conversation with a run
    dated 2999, then the server writes its own run. The latest run is the client's, yet the owner replays."""
    forger, server = written["client"][1], written["server"][1]
    forged = _body("c-shared", "r-forged", "Forged prompt FORGED-MARKER", started_at="2999-01-01T00:00:00Z")
    assert _post(client, forger, "/api/v1/snapshots", forged).status_code == 201
    assert _post(client, server, "/api/v1/snapshots", _body("c-shared", "r-owner", "Send the invoice")).status_code
    evidence.add_receipt(tenant, outcome_receipt("r-owner"))

    replay = _get(client, server, "/api/v1/conversations/c-shared/replay")
    assert replay.status_code == 200, replay.content
    body = replay.json()
    assert (body["verdict"], body["run_id"]) == (Verdict.READY, "r-owner")
    assert "FORGED-MARKER" not in replay.content.decode()
    verdicts = dict(RunVerdict.objects.filter(tenant=tenant).values_list("run__run_id", "verdict"))
    assert verdicts["r-forged"] == Verdict.UNTRUSTED_HISTORY
    assert verdicts["r-owner"] == Verdict.READY
    # The forger itself reads its own run, judged untrusted; it can no longer append.
    mine = _get(client, forger, "/api/v1/conversations/c-shared/replay")
    assert (mine.status_code, mine.json()["verdict"], mine.json()["run_id"]) == (
        409,
        Verdict.UNTRUSTED_HISTORY,
        "r-forged",
    )
    again = _body("c-shared", "r-forged-2", "Forged again", started_at="2999-01-02T00:00:00Z")
    assert _post(client, forger, "/api/v1/snapshots", again).status_code == 403


def test_a_conversation_only_clients_wrote_is_untrusted_for_the_server_too(client, written):
    replay = _get(client, written["server"][1], "/api/v1/conversations/c-mine/replay")
    assert (replay.status_code, replay.json()["verdict"]) == (409, Verdict.UNTRUSTED_HISTORY)
