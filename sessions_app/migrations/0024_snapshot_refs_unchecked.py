"""A snapshot's message references keep no database constraint on their tenant or snapshot (issue 24).

On PostgreSQL, `sessions_app_snapshotmessage` is partitioned by tenant and holds a row per message per snapshot,
so a snapshot of a 1,000-message history writes 1,000 rows, and PostgreSQL 15 checked both keys of each row at
commit: 45 ms for the 1,000 rows, 4 ms without the checks (measured on the OTLP benchmark's database, 2026-12-06).
search_app's 0006 made the key to the snapshot (tenant_id, snapshot_id); Django's AlterField finds only the
tenant's one-column key, so the pair is dropped here by name from the catalog. SQLite's table is rebuilt without
them by AlterField. The rows are written by one code path (`ingest.service`) in the transaction that writes their
snapshot, and the ORM's cascade deletes them with it.
"""

import django.db.models.deletion
from django.db import migrations, models


def drop_keys(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            """SELECT conname FROM pg_constraint WHERE contype = 'f' AND conparentid = 0
            AND conrelid = 'sessions_app_snapshotmessage'::regclass
            AND confrelid IN ('sessions_app_snapshot'::regclass, 'sessions_app_tenant'::regclass)"""
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f'ALTER TABLE "sessions_app_snapshotmessage" DROP CONSTRAINT "{name}"')


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0023_audit_event_saved_view"),
        ("search_app", "0006_tenant_partitions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="snapshotmessage",
            name="snapshot",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="refs",
                to="sessions_app.snapshot",
            ),
        ),
        migrations.AlterField(
            model_name="snapshotmessage",
            name="tenant",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="sessions_app.tenant",
            ),
        ),
        migrations.RunPython(drop_keys, migrations.RunPython.noop, elidable=False),
    ]
