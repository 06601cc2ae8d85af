"""Replay audit at the edges: load a run through `sessions_app.tenancy.scoping`, run the pure gates, store the
verdict, append one audit event per new finding. Receipts, waits, prompt contracts and merges re-audit
what they touch.

Every function here is the one service for its use case; the API views, the management commands, ingestion
and the dashboard all call these.
"""

import hmac
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from pydantic_ai.messages import ModelMessage

from sessions_app.audit import gates
from sessions_app.audit.digests import hash_resume_token
from sessions_app.audit.inputs import (
    AuditInputError,
    parse_prompt_contract,
    parse_receipt,
    parse_wait,
    parse_wait_resolution,
)
from sessions_app.audit.verdict import verdict_rank
from sessions_app.models import (
    AuditEvent,
    Conversation,
    ConversationMerge,
    PromptContract,
    Receipt,
    Run,
    RunVerdict,
    Snapshot,
    SnapshotMessage,
    StoredMessage,
    Tenant,
    ToolEffect,
    Wait,
)
from sessions_app.tenancy.scoping import scoped


class UnknownRun(AuditInputError):
    """A run that does not exist in this tenant: answered exactly like one that does not exist anywhere."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"No run '{run_id[:200]}' in this tenant.", status=404)


@dataclass(frozen=True)
class AuditReport:
    run_id: str
    conversation_id: str
    verdict: str
    findings: list[dict[str, str]]
    audited_at: datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "conversation_id": self.conversation_id,
            "verdict": self.verdict,
            "findings": self.findings,
            "audited_at": self.audited_at.isoformat(),
        }


# ---- auditing one run ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class History:
    """A run's latest snapshot as stored (the bytes) and as messages: what a resume would load."""

    stored: tuple[str, ...]
    messages: list[ModelMessage]


def _latest_histories(tenant: Tenant, runs: Sequence[Run]) -> dict[int, History]:
    """Each run's latest snapshot (highest step, then latest arrival; complete or interrupted), three queries."""
    latest: dict[int, int] = {}
    for snapshot_id, run_pk in (
        scoped(Snapshot, tenant)
        .filter(run__in=[run.pk for run in runs])
        .order_by("run_id", F("step").desc(nulls_last=True), "-seq")
        .values_list("id", "run_id")
    ):
        latest.setdefault(run_pk, snapshot_id)
    refs: dict[int, list[int]] = {}
    for snapshot_id, message_id in (
        SnapshotMessage.objects.filter(snapshot_id__in=list(latest.values()))
        .order_by("snapshot_id", "position")
        .values_list("snapshot_id", "message_id")
    ):
        refs.setdefault(snapshot_id, []).append(message_id)
    wanted = {message_id for ids in refs.values() for message_id in ids}
    data = dict(scoped(StoredMessage, tenant).filter(id__in=wanted).values_list("id", "data"))
    histories = {}
    for run_pk, snapshot_id in latest.items():
        stored = tuple(data[ref] for ref in refs.get(snapshot_id, []))
        histories[run_pk] = History(stored, gates.load_history(stored))
    return histories


def _group(rows: Iterable[tuple[Any, Any]]) -> dict[Any, list[Any]]:
    grouped: dict[Any, list[Any]] = {}
    for key, value in rows:
        grouped.setdefault(key, []).append(value)
    return grouped


def build_contexts(
    tenant: Tenant, runs: Sequence[Run], now: datetime, histories: dict[int, History] | None = None
) -> dict[int, tuple[gates.AuditContext, list[ModelMessage]]]:
    """Everything the gates need about each run, read only through the tenant, one query per fact for all runs.

    `histories` holds latest snapshots the caller already has in memory (ingestion just validated them);
    only the others are read.
    """
    histories = dict(histories or {})
    missing = [run for run in runs if run.pk not in histories]
    if missing:
        histories.update(_latest_histories(tenant, missing))
    run_pks = [run.pk for run in runs]
    empty = History((), [])
    history_ids = {
        run.pk: {m.conversation_id for m in histories.get(run.pk, empty).messages if m.conversation_id}
        for run in runs
    }
    all_history_ids = set().union(*history_ids.values()) if history_ids else set()
    conversation_ids = {run.pk: run.conversation.external_id for run in runs}

    snapshot_facts = scoped(Snapshot, tenant).filter(run__in=run_pks)
    sources = _group(snapshot_facts.values_list("run_id", "source"))
    principals = _group(snapshot_facts.values_list("run_id", "principal_hash"))
    parents = dict(
        scoped(Run, tenant)
        .filter(run_id__in={run.parent_run_id for run in runs if run.parent_run_id})
        .values_list("run_id", "conversation__external_id")
    )
    contracts = {
        contract.agent_name: contract
        for contract in scoped(PromptContract, tenant).filter(agent_name__in={run.agent_name for run in runs})
    }
    effects = _group(
        (run_pk, (call_id, status))
        for run_pk, call_id, status in scoped(ToolEffect, tenant)
        .filter(run__in=run_pks)
        .values_list("run_id", "tool_call_id", "status")
    )
    # Read afresh: ingestion may have claimed a conversation for its first principal a moment ago.
    owners = dict(
        scoped(Conversation, tenant)
        .filter(pk__in={run.conversation_id for run in runs})
        .values_list("pk", "owner_principal_hash")
    )
    owned = set(
        scoped(Conversation, tenant).filter(external_id__in=all_history_ids).values_list("external_id", flat=True)
    )
    tenant_run_ids = set(
        scoped(Run, tenant)
        .filter(run_id__in=all_history_ids | set(conversation_ids.values()))
        .values_list("run_id", flat=True)
    )
    merges = _group(
        scoped(ConversationMerge, tenant)
        .filter(conversation__in={run.conversation_id for run in runs})
        .values_list("conversation_id", "merged_external_id")
    )
    receipts = _group(
        (run_pk, gates.ReceiptFact(effect, evidence))
        for run_pk, effect, evidence in scoped(Receipt, tenant)
        .filter(run__in=run_pks)
        .values_list("run_id", "effect", "evidence")
    )
    waits = _group(
        (run_pk, gates.WaitFact(owner, decision, deadline, resolved_at is not None))
        for run_pk, owner, decision, deadline, resolved_at in scoped(Wait, tenant)
        .filter(run__in=run_pks)
        .values_list("run_id", "owner", "decision", "deadline", "resolved_at")
    )

    contexts = {}
    for run in runs:
        history = histories.get(run.pk, empty)
        contract = contracts.get(run.agent_name)
        run_effects = dict(effects.get(run.pk, []))
        ids = history_ids[run.pk]
        conversation_id = conversation_ids[run.pk]
        ctx = gates.AuditContext(
            run_id=run.run_id,
            conversation_id=conversation_id,
            now=now,
            stored_messages=history.stored,
            agent_name=run.agent_name,
            sources=frozenset({run.source, *sources.get(run.pk, [])}),
            parent_run_id=run.parent_run_id,
            parent_conversation_id=parents.get(run.parent_run_id) if run.parent_run_id else None,
            owned_conversation_ids=frozenset(ids & owned),
            tenant_run_ids=frozenset((ids | {conversation_id}) & tenant_run_ids),
            merged_conversation_ids=frozenset(merges.get(run.conversation_id, [])),
            prompt_contract=gates.PromptContractFact(contract.kind, contract.value) if contract else None,
            # No rows means no ledger was ingested for this run, which is not the same as "nothing started".
            tool_effects=run_effects or None,
            receipts=tuple(receipts.get(run.pk, [])),
            waits=tuple(waits.get(run.pk, [])),
            owner_principal_hash=owners.get(run.conversation_id) or "",
            run_principal_hashes=frozenset(set(principals.get(run.pk, [])) - {""}),
        )
        contexts[run.pk] = (ctx, history.messages)
    return contexts


def build_context(run: Run, now: datetime) -> tuple[gates.AuditContext, list[ModelMessage]]:
    """Everything the gates need about one run (see `build_contexts`)."""
    return build_contexts(run.tenant, [run], now)[run.pk]


def _record_findings(tenant: Tenant, found: Sequence[tuple[Run, Iterable[gates.Finding]]], now: datetime) -> int:
    """One audit event per finding, the first time it appears for its run; returns how many were new."""
    by_run = {run.run_id: (run, {finding.key: finding for finding in findings}) for run, findings in found}
    keys = {key for _, by_key in by_run.values() for key in by_key}
    if not keys:
        return 0
    known = set(
        scoped(AuditEvent, tenant)
        .filter(run_id__in=list(by_run), finding_key__in=list(keys))
        .values_list("run_id", "finding_key")
    )
    new = [
        AuditEvent(
            tenant=tenant,
            event_class=finding.event_class,
            conversation_id=finding.conversation_id or run.conversation.external_id,
            run_id=run.run_id,
            tool_call_hash=finding.tool_call_hash,
            observed_at=now,
            finding_key=key,
        )
        for run, by_key in by_run.values()
        for key, finding in by_key.items()
        if (run.run_id, key) not in known
    ]
    # ignore_conflicts: a concurrent audit of the same run may have written the same finding a moment ago.
    AuditEvent.objects.bulk_create(new, ignore_conflicts=True, batch_size=500)
    return len(new)


def _recheck_at(ctx: gates.AuditContext) -> datetime | None:
    """A live wait turns into STUCK at its deadline with nothing else happening: audit again then."""
    deadlines = [w.deadline for w in ctx.waits if not w.resolved and w.deadline > ctx.now]
    return min(deadlines) if deadlines else None


def audit_run(run: Run, *, now: datetime | None = None) -> AuditReport:
    """Run the six gates on `run`'s latest snapshot, store the verdict, record new findings once.

    Receipts, waits, contracts and merges call this for the runs they affect; ingestion calls `audit_runs`.
    """
    return audit_runs(run.tenant, [run], now=now)[0]


def audit_runs(
    tenant: Tenant,
    runs: Sequence[Run],
    *,
    now: datetime | None = None,
    histories: dict[int, History] | None = None,
) -> list[AuditReport]:
    """`audit_run` for many runs of one tenant at once: one query per fact, one for verdicts, one for events.

    Ingestion calls this inside its transaction with the histories it just validated (`histories`, by run pk).
    """
    now = now or timezone.now()
    if not runs:
        return []
    with transaction.atomic(savepoint=False):  # as update_transcript: no savepoint inside ingestion's transaction
        contexts = build_contexts(tenant, runs, now, histories)
        results = {run.pk: gates.run_gates(*contexts[run.pk]) for run in runs}
        existing = {v.run_id: v for v in scoped(RunVerdict, tenant).filter(run__in=[run.pk for run in runs])}
        changed, created = [], []
        for run in runs:
            result = results[run.pk]
            values = {
                "verdict": result.verdict,
                "findings": [finding.as_dict() for finding in result.findings],
                "repair_count": sum(1 for f in result.findings if f.gate == gates.TOOL_PAIRING),
                "updated_at": now,
                "recheck_at": _recheck_at(contexts[run.pk][0]),
            }
            row = existing.get(run.pk)
            if row is None:
                created.append(RunVerdict(tenant=tenant, run=run, **values))
            else:
                for field_name, value in values.items():
                    setattr(row, field_name, value)
                changed.append(row)
        RunVerdict.objects.bulk_create(created, batch_size=500)
        RunVerdict.objects.filter(tenant=tenant).bulk_update(
            changed, ["verdict", "findings", "repair_count", "updated_at", "recheck_at"], batch_size=500
        )
        _record_findings(tenant, [(run, results[run.pk].findings) for run in runs], now)
    return [
        AuditReport(
            run.run_id,
            contexts[run.pk][0].conversation_id,
            results[run.pk].verdict,
            [finding.as_dict() for finding in results[run.pk].findings],
            now,
        )
        for run in runs
    ]


def get_run(tenant: Tenant, run_id: str) -> Run:
    run = scoped(Run, tenant).select_related("conversation", "tenant").filter(run_id=run_id).first()
    if run is None:
        raise UnknownRun(run_id)
    return run


def audit_report(run: Run, *, now: datetime | None = None) -> AuditReport:
    """The stored verdict, audited afresh only when there is none yet or a wait's deadline has passed.

    Reading a report is what page views and GET requests do, so it records nothing new unless the verdict
    really changed by itself.
    """
    now = now or timezone.now()
    stored = scoped(RunVerdict, run.tenant).filter(run=run).first()
    if stored is None or (stored.recheck_at is not None and stored.recheck_at <= now):
        return audit_run(run, now=now)
    return AuditReport(
        run.run_id, run.conversation.external_id, stored.verdict, stored.findings, stored.updated_at
    )


def reaudit_runs(runs: Iterable[Run], *, now: datetime | None = None) -> int:
    count = 0
    for run in runs:
        audit_run(run, now=now)
        count += 1
    return count


def refresh_due_verdicts(*, now: datetime | None = None) -> int:
    """Re-audit every run whose stored verdict changes by itself by now (WAITING past its deadline)."""
    now = now or timezone.now()
    count = 0
    for tenant in Tenant.objects.all():
        due = scoped(RunVerdict, tenant).filter(recheck_at__lte=now).values_list("run_id", flat=True)
        runs = scoped(Run, tenant).filter(id__in=list(due)).select_related("conversation", "tenant")
        count += reaudit_runs(runs, now=now)
    return count


# ---- receipts, waits, prompt contracts, merges ---------------------------------------------------------


def add_receipt(tenant: Tenant, data: object, *, now: datetime | None = None) -> tuple[Receipt, AuditReport]:
    """Record a receipt for a run and re-audit it; bad input changes nothing."""
    parsed = parse_receipt(data)
    with transaction.atomic():
        run = get_run(tenant, parsed.run_id)
        receipt = Receipt.objects.create(
            tenant=tenant,
            run=run,
            effect=parsed.effect,
            evidence=parsed.evidence,
            checked_by=parsed.checked_by,
            reference=parsed.reference,
        )
        report = audit_run(run, now=now)
    return receipt, report


def add_wait(
    tenant: Tenant, data: object, *, now: datetime | None = None
) -> tuple[Wait, str | None, AuditReport]:
    """Record a wait and re-audit its run. Returns the resume token when we generated it (shown once)."""
    now = now or timezone.now()
    parsed = parse_wait(data, now=now)
    generated = None if parsed.resume_token else secrets.token_urlsafe(24)
    with transaction.atomic():
        run = get_run(tenant, parsed.run_id)
        wait = Wait.objects.create(
            tenant=tenant,
            run=run,
            owner=parsed.owner,
            decision=parsed.decision,
            deadline=parsed.deadline,
            resume_token_hash=hash_resume_token(parsed.resume_token or generated or ""),
        )
        report = audit_run(run, now=now)
    return wait, generated, report


class TokenMismatch(AuditInputError):
    def __init__(self) -> None:
        super().__init__("'resume_token' does not match an open wait of this run.", status=403)


def resolve_wait(
    tenant: Tenant, data: object, *, actor: str = "", now: datetime | None = None
) -> tuple[Wait, AuditReport]:
    """Resolve the open wait of a run whose resume token is presented (checked against the stored hash), then
    re-audit the run. A token that matches no open wait changes nothing."""
    now = now or timezone.now()
    parsed = parse_wait_resolution(data)
    presented = hash_resume_token(parsed.resume_token)
    with transaction.atomic():
        run = get_run(tenant, parsed.run_id)
        open_waits = scoped(Wait, tenant).select_for_update().filter(run=run, resolved_at__isnull=True)
        wait = next((w for w in open_waits if hmac.compare_digest(w.resume_token_hash, presented)), None)
        if wait is None:
            raise TokenMismatch()
        wait.resolved_at = now
        wait.resolved_by = actor[:200]
        wait.save(update_fields=["resolved_at", "resolved_by"])
        record_event(
            tenant,
            gates.WAIT_RESOLVED,
            actor=actor,
            conversation_id=run.conversation.external_id,
            run_id=run.run_id,
            now=now,
        )
        report = audit_run(run, now=now)
    return wait, report


# An agent can have many thousands of runs; re-auditing them all inside one request would hold it for minutes.
# The most recent ones are re-audited at once, the rest are marked due for `manage.py audit --refresh-due`
# (and for `audit_report`, which re-audits a due run when it is read).
REAUDIT_INLINE_LIMIT = 200


def set_prompt_contract(
    tenant: Tenant, agent_name: str, data: object, *, now: datetime | None = None
) -> tuple[PromptContract, int]:
    """Register (or replace) an agent's prompt contract and re-audit that agent's runs.

    Returns how many runs were re-audited now; beyond REAUDIT_INLINE_LIMIT the older runs are marked due.
    """
    now = now or timezone.now()
    parsed = parse_prompt_contract(agent_name, data)
    with transaction.atomic():
        contract, _ = PromptContract.objects.update_or_create(
            tenant=tenant, agent_name=parsed.agent_name, defaults={"kind": parsed.kind, "value": parsed.value}
        )
        runs = (
            scoped(Run, tenant)
            .filter(agent_name=parsed.agent_name)
            .select_related("conversation", "tenant")
            .order_by("-started_at", "-id")
        )
        count = reaudit_runs(runs[:REAUDIT_INLINE_LIMIT], now=now)
        later = runs.values_list("id", flat=True)[REAUDIT_INLINE_LIMIT:]
        scoped(RunVerdict, tenant).filter(run_id__in=list(later)).update(recheck_at=now)
    return contract, count


def record_merge(
    tenant: Tenant, conversation_id: str, merged_conversation_id: str, *, actor: str = ""
) -> ConversationMerge:
    """Record that `merged_conversation_id`'s messages belong to `conversation_id`, and re-audit its runs."""
    if not merged_conversation_id or merged_conversation_id == conversation_id:
        raise AuditInputError("A merge needs another, non-empty conversation id.")
    with transaction.atomic():
        conversation = scoped(Conversation, tenant).filter(external_id=conversation_id).first()
        if conversation is None:
            raise AuditInputError(f"No conversation '{conversation_id[:200]}' in this tenant.", status=404)
        merge, _ = ConversationMerge.objects.get_or_create(
            tenant=tenant,
            conversation=conversation,
            merged_external_id=merged_conversation_id[:200],
            defaults={"actor": actor[:200]},
        )
        reaudit_runs(
            scoped(Run, tenant).filter(conversation=conversation).select_related("conversation", "tenant")
        )
    return merge


# ---- the audit log and lists for the dashboard ---------------------------------------------------------


def record_event(
    tenant: Tenant,
    event_class: str,
    *,
    actor: str = "",
    conversation_id: str = "",
    run_id: str = "",
    now: datetime | None = None,
    verdict: str = "",
    principal_hash: str = "",
) -> AuditEvent:
    """Append an event that is not an audit finding: an export, a key created or revoked, a member changed, a
    wait resolved, a replay allowed or refused (with its verdict and the requested principal's keyed hash)."""
    if event_class not in gates.EVENT_CLASSES:
        raise AuditInputError(f"Unknown audit event class {event_class!r}.")
    return AuditEvent.objects.create(
        tenant=tenant,
        event_class=event_class,
        actor=actor[:200],
        conversation_id=conversation_id[:200],
        run_id=run_id[:200],
        observed_at=now or timezone.now(),
        verdict=verdict,
        principal_hash=principal_hash,
    )


def list_audit_events(
    tenant: Tenant,
    *,
    event_classes: Iterable[str] = (),
    run_id: str = "",
    conversation_id: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
    before_id: int | None = None,
    limit: int = 50,
) -> list[AuditEvent]:
    """The tenant's audit events, newest first, narrowed by class, run, conversation and time (`since`
    inclusive, `until` exclusive).

    Paginate by passing the last row's id as `before_id`.
    """
    classes = list(event_classes)
    unknown = set(classes) - set(gates.EVENT_CLASSES)
    if unknown:
        raise AuditInputError(f"Unknown audit event class(es): {', '.join(sorted(unknown))}.")
    events: QuerySet[AuditEvent] = scoped(AuditEvent, tenant)
    if classes:
        events = events.filter(event_class__in=classes)
    if run_id:
        events = events.filter(run_id=run_id)
    if conversation_id:
        events = events.filter(conversation_id=conversation_id)
    if since is not None:
        events = events.filter(observed_at__gte=since)
    if until is not None:
        events = events.filter(observed_at__lt=until)
    if before_id is not None:
        events = events.filter(id__lt=before_id)
    return list(events.order_by("-observed_at", "-id")[: max(1, min(limit, 500))])


@dataclass(frozen=True)
class RepairRow:
    """One tool-pairing repair of a run, as the dashboard lists them."""

    run_id: str
    conversation_id: str
    verdict: str
    code: str
    tool_name: str
    tool_call_hash: str
    detail: str
    guidance: str
    updated_at: datetime


def list_repairs(tenant: Tenant, *, limit: int = 200) -> list[RepairRow]:
    """Every current tool-pairing repair (interrupted calls, removed orphan results) across the tenant."""
    rows: list[RepairRow] = []
    verdicts = (
        scoped(RunVerdict, tenant)
        .filter(repair_count__gt=0)
        .select_related("run__conversation")
        .order_by("-updated_at", "-id")
    )
    for stored in verdicts:
        for finding in stored.findings:
            if finding.get("gate") != gates.TOOL_PAIRING:
                continue
            rows.append(
                RepairRow(
                    run_id=stored.run.run_id,
                    conversation_id=stored.run.conversation.external_id,
                    verdict=stored.verdict,
                    code=finding["code"],
                    tool_name=finding.get("tool_name", ""),
                    tool_call_hash=finding.get("tool_call_hash", ""),
                    detail=finding["detail"],
                    guidance=finding["guidance"],
                    updated_at=stored.updated_at,
                )
            )
            if len(rows) >= limit:
                return rows
    return rows


def runs_with_verdict(tenant: Tenant, verdicts: Iterable[str]) -> QuerySet[Run]:
    """The tenant's runs whose stored verdict is one of `verdicts` (for list filters)."""
    return scoped(Run, tenant).filter(verdict__verdict__in=list(verdicts))


def verdict_counts(tenant: Tenant) -> dict[str, int]:
    """How many runs have each verdict, graver first; runs never audited are not counted."""
    counts: dict[str, int] = {}
    for verdict in scoped(RunVerdict, tenant).values_list("verdict", flat=True):
        counts[verdict] = counts.get(verdict, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: verdict_rank(item[0])))
