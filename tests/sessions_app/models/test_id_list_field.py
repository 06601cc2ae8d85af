"""A snapshot's history is kept as comma-separated StoredMessage ids in one text column, read back as a list of
ints in order (duplicates and all), and nothing but a list of ints is written to it."""

import pytest
from django.db import connection
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Snapshot
from sessions_app.models.id_list_field import IdListField, ids_of
from tests.agents import weather_agent
from tests.factories import make_tenant


def test_the_text_holds_the_ids_in_order():
    assert ids_of("11,12,11") == [11, 12, 11]
    assert ids_of("") == []


@pytest.mark.parametrize("value", ["11,12", [11, "12"], [11, 1.0], [True], {11: 12}])
def test_anything_but_a_list_of_ints_is_refused_before_it_is_written(value):
    field = IdListField()
    field.name = "message_ids"
    with pytest.raises(TypeError, match="message_ids holds a list of ints"):
        field.get_prep_value(value)


@pytest.mark.django_db
def test_a_stored_history_is_one_text_value_and_reads_back_as_its_ids():
    tenant = make_tenant()
    history = weather_agent().run_sync("Weather in Paris?").all_messages()
    body = {
        "conversation_id": "c",
        "run_id": "r",
        "messages": ModelMessagesTypeAdapter.dump_python(history, mode="json"),
    }
    ingest_snapshots(tenant, [parse_snapshot(body)], source="server", via="api")
    snapshot = Snapshot.objects.get(tenant=tenant)
    assert len(snapshot.message_ids) == len(history) and all(type(i) is int for i in snapshot.message_ids)
    with connection.cursor() as cursor:
        cursor.execute("SELECT message_ids FROM sessions_app_snapshot WHERE id = %s", [snapshot.pk])
        (stored,) = cursor.fetchone()
    assert stored == ",".join(map(str, snapshot.message_ids))
    snapshot.message_ids = []
    snapshot.save(update_fields=["message_ids"])
    snapshot.refresh_from_db()
    assert snapshot.message_ids == []
