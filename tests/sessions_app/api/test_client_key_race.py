"""A client key's append racing a server key's first write to the same conversation, on real concurrent
connections (PostgreSQL): whichever wins, no 500, a client key never appends to history a server key wrote (the
conversation's row lock decides who was first), and the server's runs stay READY for the owner's replay."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from sessions_app.audit import evidence
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import RunVerdict, Snapshot
from sessions_app.tenancy.api_keys import create_api_key
from tests.sessions_app.api.test_client_key_reach import _body, _get, _post
from tests.sessions_app.audit.audit_cases import outcome_receipt

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL's row locks"),
]

ROUNDS = 6


def _write(start: threading.Barrier, raw: str, conversation: str, run_id: str, prompt: str, **extra: str) -> int:
    """One POST on this thread's own connection, released with the other writer's."""
    start.wait()
    try:
        return _post(Client(), raw, "/api/v1/snapshots", _body(conversation, run_id, prompt, **extra)).status_code
    finally:
        connection.close()


def test_a_client_append_racing_the_servers_first_write_never_lands_after_it(tenant):
    server, forger = create_api_key(tenant, "server")[1], create_api_key(tenant, "client")[1]
    outcomes = []
    for round_number in range(ROUNDS):
        conversation = f"c-race-{round_number}"
        start = threading.Barrier(2)

        with ThreadPoolExecutor(2) as pool:
            client_write = pool.submit(
                _write,
                start,
                forger,
                conversation,
                f"r-forged-{round_number}",
                "Forged",
                started_at="2999-01-01T00:00:00Z",
            )
            server_write = pool.submit(
                _write, start, server, conversation, f"r-owner-{round_number}", "Send the invoice"
            )
            client_status, server_status = client_write.result(), server_write.result()

        assert server_status == 201, (round_number, server_status)
        assert client_status in (201, 403), (round_number, client_status)
        written = list(
            Snapshot.objects.filter(tenant=tenant, run__conversation__external_id=conversation).order_by("pk")
        )
        sources = [snapshot.source for snapshot in written]
        if client_status == 403:  # the server was first: nothing of the client's was written
            assert sources == ["server"]
        else:  # the client was first; its run is written before the server's, never after
            assert sources == ["client", "server"]
        evidence.add_receipt(tenant, outcome_receipt(f"r-owner-{round_number}"))
        replay = _get(Client(), server, f"/api/v1/conversations/{conversation}/replay")
        assert replay.status_code == 200, replay.content
        assert (replay.json()["verdict"], replay.json()["run_id"]) == (Verdict.READY, f"r-owner-{round_number}")
        assert RunVerdict.objects.get(tenant=tenant, run__run_id=f"r-owner-{round_number}").verdict == Verdict.READY
        # Once the server has written, the client key can append no more.
        late = _body(conversation, f"r-late-{round_number}", "Late", started_at="2999-01-02T00:00:00Z")
        assert _post(Client(), forger, "/api/v1/snapshots", late).status_code == 403
        outcomes.append(client_status)
    assert len(outcomes) == ROUNDS
