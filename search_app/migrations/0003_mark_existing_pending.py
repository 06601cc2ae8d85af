"""Transcripts stored before the index existed: mark their conversations for the background reconciliation."""

from django.db import migrations


def mark_pending(apps, schema_editor):
    Conversation = apps.get_model("sessions_app", "Conversation")
    TranscriptEntry = apps.get_model("sessions_app", "TranscriptEntry")
    ConversationIndex = apps.get_model("search_app", "ConversationIndex")
    with_entries = TranscriptEntry.objects.values("conversation_id").distinct()
    ConversationIndex.objects.bulk_create(
        [
            ConversationIndex(conversation_id=cid, tenant_id=tid, pending=True)
            for cid, tid in Conversation.objects.filter(id__in=with_entries).values_list("id", "tenant_id")
        ],
        batch_size=1000,
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [("search_app", "0002_fulltext"), ("sessions_app", "0001_initial")]

    operations = [migrations.RunPython(mark_pending, migrations.RunPython.noop)]
