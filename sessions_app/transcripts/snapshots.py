"""Reading a run's snapshots for the snapshot pages (ORM edge of snapshot_diff)."""

from pydantic_ai.messages import ModelMessagesTypeAdapter

from model_messages.rendering import message_role, message_text
from model_messages.serialization import join_messages
from sessions_app.models import Run, Snapshot, StoredMessage
from sessions_app.tenancy.scoping import get_scoped_or_404, scoped
from sessions_app.transcripts.recovery.summary_artifacts import is_summary_artifact
from sessions_app.transcripts.snapshot_diff import DiffMessage, SnapshotDiff, diff_snapshots
from sessions_app.transcripts.transcript_layout import Mask


def snapshots_of(run: Run) -> list[Snapshot]:
    # A listing shows no content: the ids a snapshot names (1,000 at a 1,000-message thread) stay unread.
    return list(scoped(Snapshot, run.tenant).filter(run=run).defer("message_ids").order_by("seq"))


def _messages(snapshot: Snapshot, mask: Mask) -> list[DiffMessage]:
    stored = {
        message_id: (content_hash, data)
        for message_id, content_hash, data in StoredMessage.objects.filter(
            tenant_id=snapshot.tenant_id, id__in=set(snapshot.message_ids)
        ).values_list("id", "content_hash", "data")
    }
    rows = [stored[message_id] for message_id in snapshot.message_ids]
    parsed = ModelMessagesTypeAdapter.validate_json(join_messages(data for _, data in rows)) if rows else []
    return [
        DiffMessage(
            position=position,
            content_hash=content_hash,
            role=message_role(message),
            text=mask(message_text(message)),
            summary=is_summary_artifact(message),
        )
        for position, ((content_hash, _), message) in enumerate(zip(rows, parsed, strict=True))
    ]


def diff_with_previous(run: Run, seq: int, mask: Mask) -> tuple[Snapshot, Snapshot | None, SnapshotDiff]:
    """Snapshot `seq` of `run` against the one written just before it (the first is diffed against nothing)."""
    snapshot = get_scoped_or_404(Snapshot, run.tenant, run=run, seq=seq)
    previous = previous_snapshot(run, snapshot.seq)
    return snapshot, previous, diff_between(previous, snapshot, mask)


def previous_snapshot(run: Run, seq: int) -> Snapshot | None:
    """The snapshot `run` wrote just before its snapshot `seq`, if any."""
    return scoped(Snapshot, run.tenant).filter(run=run, seq__lt=seq).order_by("-seq").first()


def diff_between(before: Snapshot | None, after: Snapshot, mask: Mask) -> SnapshotDiff:
    """`after` against `before` (any two snapshots of one run; no `before` is the empty history)."""
    return diff_snapshots(_messages(before, mask) if before else [], _messages(after, mask))
