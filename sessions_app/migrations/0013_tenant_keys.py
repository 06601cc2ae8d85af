"""Every tenant-owned row names its tenant, and every unique key contains it (docs/SCALING.md).

Snapshot references gain the tenant of their snapshot; the unique keys of transcript positions, snapshot
positions and conversation merges gain the tenant. search_app's migration 0006 then makes the PostgreSQL keys
tenant-qualified and partitions the largest tables by tenant.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0012_tooleffect_tenant_call"),
    ]

    operations = [
        migrations.AddField(
            model_name="snapshotmessage",
            name="tenant",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="sessions_app.tenant",
            ),
        ),
        migrations.RunSQL(
            "UPDATE sessions_app_snapshotmessage SET tenant_id = "
            "(SELECT s.tenant_id FROM sessions_app_snapshot s WHERE s.id = sessions_app_snapshotmessage.snapshot_id)",
            migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="snapshotmessage",
            name="tenant",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="sessions_app.tenant"
            ),
        ),
        migrations.RemoveConstraint(model_name="snapshotmessage", name="snapshotmessage_unique"),
        migrations.AddConstraint(
            model_name="snapshotmessage",
            constraint=models.UniqueConstraint(
                fields=("tenant", "snapshot", "position"), name="snapshotmessage_unique"
            ),
        ),
        migrations.RemoveConstraint(model_name="transcriptentry", name="transcript_unique_position"),
        migrations.AddConstraint(
            model_name="transcriptentry",
            constraint=models.UniqueConstraint(
                condition=models.Q(summary_artifact=False),
                fields=("tenant", "conversation", "position"),
                name="transcript_unique_position",
            ),
        ),
        migrations.RemoveConstraint(model_name="conversationmerge", name="conversationmerge_unique"),
        migrations.AddConstraint(
            model_name="conversationmerge",
            constraint=models.UniqueConstraint(
                fields=("tenant", "conversation", "merged_external_id"), name="conversationmerge_unique"
            ),
        ),
    ]
