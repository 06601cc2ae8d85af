"""A snapshot's history as one list of StoredMessage ids (issue 24).

A row per message per snapshot made every write of a long history cost the history: four runs of a 1,000-message
thread inserted 4,000 reference rows, 25 to 33 ms of the export. `Snapshot.message_ids` now holds the order, filled
here from the rows; the rows stay as the index by message (`SnapshotMessage`: new rows only for the messages a
conversation's snapshots had not named). Existing rows are all kept: a row more than needed changes nothing.
"""

from django.db import migrations, models

POSTGRESQL = """
UPDATE sessions_app_snapshot AS s SET message_ids = named.ids
FROM (
    SELECT tenant_id, snapshot_id, jsonb_agg(message_id ORDER BY position) AS ids
    FROM sessions_app_snapshotmessage GROUP BY tenant_id, snapshot_id
) AS named
WHERE named.tenant_id = s.tenant_id AND named.snapshot_id = s.id
"""
# Grouped by the tenant with the snapshot and joined on it, so Citus runs it shard by shard (tenant_id distributes).

SQLITE = """
UPDATE sessions_app_snapshot SET message_ids = (
    SELECT json_group_array(message_id) FROM (
        SELECT message_id FROM sessions_app_snapshotmessage AS m
        WHERE m.snapshot_id = sessions_app_snapshot.id ORDER BY m.position
    )
)
WHERE EXISTS (SELECT 1 FROM sessions_app_snapshotmessage AS m WHERE m.snapshot_id = sessions_app_snapshot.id)
"""


def fill_message_ids(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(POSTGRESQL if schema_editor.connection.vendor == "postgresql" else SQLITE)


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0024_snapshot_refs_unchecked")]

    operations = [
        migrations.AddField(
            model_name="snapshot",
            name="message_ids",
            field=models.JSONField(default=list, help_text="StoredMessage ids of the history, in order."),
        ),
        migrations.RunPython(fill_message_ids, migrations.RunPython.noop, elidable=False),
    ]
