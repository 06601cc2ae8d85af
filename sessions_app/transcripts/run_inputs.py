"""A conversation's runs and snapshots read back as plain recovery input (`transcripts.recovery.fold`)."""

from django.db.models import F
from pydantic_ai.messages import ModelMessage

from model_messages.serialization import load_message
from sessions_app.models import Conversation, Run, Snapshot, StoredMessage
from sessions_app.transcripts.recovery.fold import RunInput, SnapshotInput

SnapshotKey = tuple[bool, int, int]  # (no step, step, arrival): a run's snapshots in recovery order


def snapshot_key(snapshot: Snapshot) -> SnapshotKey:
    return (snapshot.step is None, snapshot.step or 0, snapshot.seq)


def load_run_inputs(
    conversation: Conversation, known: dict[int, ModelMessage] | None = None
) -> tuple[list[RunInput], dict[int, int], dict[int, SnapshotKey]]:
    """The conversation's runs and snapshots as plain recovery input, id(message object) → StoredMessage id, and
    each run's last snapshot key (by run pk).

    `known` maps StoredMessage ids to message objects the caller already holds (ingestion just validated them),
    so only the others are read and parsed again.
    """
    runs = list(Run.objects.filter(tenant_id=conversation.tenant_id, conversation=conversation))
    # A run's snapshots in step order, whatever order they arrived in (a step without a number: by arrival).
    snapshots = list(
        Snapshot.objects.filter(tenant_id=conversation.tenant_id, run__in=runs).order_by(
            "run_id", F("step").asc(nulls_last=True), "seq"
        )
    )
    wanted = {mid for snapshot in snapshots for mid in snapshot.message_ids}
    known = known or {}
    objects = {mid: known[mid] for mid in wanted if mid in known}
    missing = [mid for mid in wanted if mid not in objects]
    for start in range(0, len(missing), 2000):
        rows = StoredMessage.objects.filter(
            tenant_id=conversation.tenant_id, id__in=missing[start : start + 2000]
        ).values_list("id", "data")
        objects.update((mid, load_message(data)) for mid, data in rows)
    stored_id_of = {id(obj): mid for mid, obj in objects.items()}
    snapshots_by_run: dict[int, list[SnapshotInput]] = {}
    last_keys: dict[int, SnapshotKey] = {}
    for snapshot in snapshots:
        last_keys[snapshot.run_id] = snapshot_key(snapshot)
        placed = snapshots_by_run.setdefault(snapshot.run_id, [])
        placed.append(
            SnapshotInput(
                seq=len(placed),
                state="complete" if snapshot.state == "complete" else "interrupted",
                messages=[objects[mid] for mid in snapshot.message_ids],
            )
        )
    run_inputs = [
        RunInput(
            run_id=run.run_id,
            parent_run_id=run.parent_run_id or None,
            started_at=run.started_at,
            arrival=run.id,  # ids grow in insertion order, and runs of a conversation are inserted under its lock
            snapshots=snapshots_by_run.get(run.id, []),
        )
        for run in runs
    ]
    return run_inputs, stored_id_of, last_keys
