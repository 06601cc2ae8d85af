"""Content-addressed messages: each distinct message stored once per tenant, its id answered whether it was stored
now, before, or by another writer; on PostgreSQL new messages cost the one statement that stores them."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.ingest.storage import store_messages
from sessions_app.models import StoredMessage


def wanted(*names: str) -> dict[str, tuple[str, str]]:
    return {f"{name:0>64}": (f"c{name}", f'{{"kind": "request", "name": "{name}"}}') for name in names}


@pytest.mark.django_db
def test_each_message_is_stored_once_and_every_id_is_answered(tenant, other_tenant):
    first, inserted = store_messages(tenant.id, wanted("a", "b"))
    assert inserted == 2
    again, inserted = store_messages(tenant.id, wanted("b", "c"))
    assert inserted == 1
    assert again[f"{'b':0>64}"] == first[f"{'b':0>64}"]
    rows = dict(StoredMessage.objects.filter(tenant=tenant).values_list("sha256", "id"))
    assert rows == first | again
    elsewhere, inserted = store_messages(other_tenant.id, wanted("a"))
    assert inserted == 1 and elsewhere[f"{'a':0>64}"] != first[f"{'a':0>64}"]  # each tenant its own rows


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the INSERT ... RETURNING path is PostgreSQL's")
@pytest.mark.django_db
def test_new_messages_cost_one_statement_and_known_ones_one_more(tenant):
    with CaptureQueriesContext(connection) as new:
        store_messages(tenant.id, wanted("a", "b", "c"))
    assert len(new.captured_queries) == 1
    with CaptureQueriesContext(connection) as mixed:
        ids, inserted = store_messages(tenant.id, wanted("c", "d"))
    assert (len(mixed.captured_queries), inserted) == (2, 1)
    assert set(ids) == set(wanted("c", "d"))
