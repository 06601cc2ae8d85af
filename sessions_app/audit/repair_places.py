"""Where each tool-pairing repair sits in a conversation's transcript, so repairs and findings link to it.

A repaired call or orphan result the recovered transcript holds is its message (`#m-<position>`). A call that
only an interrupted snapshot holds (the run stopped between the call and its result, and recovery keeps
complete snapshots only) is not in the transcript: the conversation page shows it in place, after the run's
last transcript message, where pydantic-ai's repair would insert the synthesized "interrupted" return, under
its own anchor. Found from the rows' stored facts; no message body is read.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Max

from sessions_app.audit import gates
from sessions_app.audit.digests import hash_tool_call_id
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import Conversation, Run, Snapshot, Tenant, TranscriptEntry
from sessions_app.models.audit import RunVerdict
from sessions_app.tenancy.scoping import scoped


@dataclass(frozen=True)
class RepairPlace:
    position: int | None  # the message to open the page at (None: the transcript is empty)
    anchor: str  # "m-<position>", or the in-place mark of a call only a snapshot holds
    in_transcript: bool
    snapshot_seq: int | None  # the run's latest snapshot: the history the audit judged


@dataclass(frozen=True)
class UnrecordedCall:
    """An interrupted call that only a snapshot holds, shown in place on the conversation page."""

    run_id: str
    tool_name: str
    tool_call_hash: str
    detail: str
    place: RepairPlace


def unrecorded_anchor(tool_call_hash: str) -> str:
    return f"interrupted-{tool_call_hash[:16]}"


def _positions_by_call_hash(tenant: Tenant, run_pks: set[int]) -> dict[tuple[int, str], int]:
    """(run pk, hashed tool-call id) → the first transcript position whose message has a part with that id."""
    found: dict[tuple[int, str], int] = {}
    rows = (
        scoped(TranscriptEntry, tenant)
        .filter(run_id__in=run_pks, summary_artifact=False)
        .order_by("position")
        .values_list("run_id", "position", "facts")
    )
    for run_pk, position, facts in rows:
        for part in (facts or {}).get("parts") or ():
            call_id = part.get("tool_call_id")
            if call_id:
                found.setdefault((run_pk, hash_tool_call_id(str(call_id))), position)
    return found


def repair_places(tenant: Tenant, calls: Iterable[tuple[int, str]]) -> dict[tuple[int, str], RepairPlace]:
    """(run pk, hashed tool-call id) → its place, for every call given (four queries for all of them)."""
    calls = set(calls)
    run_pks = {run_pk for run_pk, _ in calls}
    if not run_pks:
        return {}
    positions = _positions_by_call_hash(tenant, run_pks)
    entries = scoped(TranscriptEntry, tenant).filter(summary_artifact=False)
    last_of_run = dict(
        entries.filter(run_id__in=run_pks).values("run_id").annotate(last=Max("position")).values_list("run_id", "last")
    )
    latest = dict(
        scoped(Snapshot, tenant)
        .filter(run_id__in=run_pks)
        .values("run_id")
        .annotate(seq=Max("seq"))
        .values_list("run_id", "seq")
    )
    # A run that never completed a step has no transcript rows: its mark goes after the conversation's last.
    conversation_of = dict(
        scoped(Run, tenant).filter(pk__in=run_pks - set(last_of_run)).values_list("pk", "conversation_id")
    )
    last_of_conversation = (
        dict(
            entries.filter(conversation_id__in=set(conversation_of.values()))
            .values("conversation_id")
            .annotate(last=Max("position"))
            .values_list("conversation_id", "last")
        )
        if conversation_of
        else {}
    )
    places = {}
    for run_pk, call_hash in calls:
        position = positions.get((run_pk, call_hash))
        if position is not None:
            places[(run_pk, call_hash)] = RepairPlace(position, f"m-{position}", True, latest.get(run_pk))
            continue
        after = last_of_run.get(run_pk)
        if after is None:
            after = last_of_conversation.get(conversation_of.get(run_pk, -1))
        places[(run_pk, call_hash)] = RepairPlace(after, unrecorded_anchor(call_hash), False, latest.get(run_pk))
    return places


def unrecorded_calls(tenant: Tenant, conversation: Conversation) -> list[UnrecordedCall]:
    """The conversation's interrupted calls that no transcript message holds, in run order."""
    verdicts = list(
        scoped(RunVerdict, tenant)
        .filter(run__tenant=tenant, run__conversation=conversation, repair_count__gt=0)
        .order_by("run__started_at", "run_id")
        .values_list("run_id", "run__run_id", "findings")
    )
    found = [
        (run_pk, run_id, finding)
        for run_pk, run_id, findings in verdicts
        for finding in findings
        if finding.get("gate") == gates.TOOL_PAIRING and finding.get("code") == Verdict.INTERRUPTED_TOOL
    ]
    places = repair_places(tenant, [(run_pk, f.get("tool_call_hash", "")) for run_pk, _, f in found])
    calls = []
    for run_pk, run_id, finding in found:
        place = places[(run_pk, finding.get("tool_call_hash", ""))]
        if not place.in_transcript:
            calls.append(
                UnrecordedCall(
                    run_id, finding.get("tool_name", ""), finding.get("tool_call_hash", ""), finding["detail"], place
                )
            )
    return calls
