"""Reading a stored transcript back as plain data, to compare two ingests of the same snapshots."""

from sessions_app.models import Conversation, Tenant, TranscriptEntry


def transcript_of(tenant: Tenant, conversation_id: str) -> list[tuple[str, str, bool, bool]]:
    """`(run id, message sha256, recovered from compaction, summary artifact)` in transcript order."""
    conversation = Conversation.objects.get(tenant=tenant, external_id=conversation_id)
    rows = (
        # Every joined table named by tenant: on Citus one shard answers (a join by id alone is repartitioned).
        TranscriptEntry.objects.filter(
            tenant=tenant, conversation=conversation, run__tenant=tenant, message__tenant=tenant
        )
        .order_by("position", "-summary_artifact", "id")
        .values_list("run__run_id", "message__sha256", "recovered_from_compaction", "summary_artifact")
    )
    return list(rows)
