"""Replay audit at the edges: load runs through `sessions_app.tenancy.scoping`, run the pure gates, store the
verdict, append one audit event per new finding.

The one service for auditing; the API views, the management commands, ingestion, the evidence services
(`sessions_app.audit.evidence`: receipts, waits, contracts, merges re-audit what they touch) and the dashboard
call these.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from pydantic_ai.messages import ModelMessage

from sessions_app.audit import gates
from sessions_app.audit.inputs import UnknownRun
from sessions_app.audit.summaries import summary_of
from sessions_app.models import (
    ApiKey,
    AuditEvent,
    Conversation,
    ConversationMerge,
    PromptContract,
    Receipt,
    Run,
    RunState,
    RuntimeSpan,
    RunVerdict,
    Snapshot,
    StoredMessage,
    Tenant,
    ToolEffect,
    Wait,
)
from sessions_app.tenancy.bulk_update import update_rows
from sessions_app.tenancy.scoping import conversations_readable_by, runs_with_conversation, scoped
from sessions_app.transcripts import list_columns
from sessions_app.transcripts.runtime_spans import AWAITING_APPROVAL, approvals_of


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
    refs = dict(scoped(Snapshot, tenant).filter(id__in=list(latest.values())).values_list("id", "message_ids"))
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
    inputs = _audit_inputs(tenant, runs, now, histories)
    return {pk: (ctx, history.messages) for pk, (ctx, history, _) in inputs.items()}


def _audit_inputs(
    tenant: Tenant, runs: Sequence[Run], now: datetime, histories: dict[int, History] | None = None
) -> dict[int, tuple[gates.AuditContext, History, gates.HistorySummary]]:
    """`build_contexts`, with each run's history and its summary (`gates.summarize`, extended from the summary
    kept for the conversation's last audited history when this one begins with it)."""
    histories = dict(histories or {})
    missing = [run for run in runs if run.pk not in histories]
    if missing:
        histories.update(_latest_histories(tenant, missing))
    run_pks = [run.pk for run in runs]
    empty = History((), [])
    summaries = {
        run.pk: summary_of(
            (tenant.pk, run.conversation_id),
            histories.get(run.pk, empty).stored,
            histories.get(run.pk, empty).messages,
        )
        for run in runs
    }
    history_ids = {run.pk: set(summaries[run.pk].conversation_ids) for run in runs}
    all_history_ids = set().union(*history_ids.values()) if history_ids else set()
    # The runs' own conversations and those their histories name, in one read. Read afresh: ingestion may have
    # claimed a conversation for its first principal a moment ago.
    own = {run.conversation_id for run in runs}
    conversation_rows = list(
        scoped(Conversation, tenant)
        .filter(Q(pk__in=own) | Q(external_id__in=all_history_ids))
        .values_list("pk", "owner_principal_hash", "external_id")
    )
    owners = {pk: owner for pk, owner, _ in conversation_rows if pk in own}
    external_ids = {pk: external_id for pk, _, external_id in conversation_rows}
    conversation_ids = {run.pk: external_ids[run.conversation_id] for run in runs}
    owned = {external_id for _, _, external_id in conversation_rows} & all_history_ids

    snapshot_facts = _group(
        (run_pk, (source, principal))
        for run_pk, source, principal in scoped(Snapshot, tenant)
        .filter(run__in=run_pks)
        .values_list("run_id", "source", "principal_hash")
    )
    # The parents' conversations and the run ids the histories name, in one read (the conversation filter keeps
    # the join on one tenant, as Citus routes it).
    parent_ids = {run.parent_run_id for run in runs if run.parent_run_id}
    run_rows = dict(
        scoped(Run, tenant)
        .filter(run_id__in=parent_ids | all_history_ids | set(conversation_ids.values()), conversation__tenant=tenant)
        .values_list("run_id", "conversation__external_id")
    )
    parents = {run_id: run_rows[run_id] for run_id in parent_ids & run_rows.keys()}
    tenant_run_ids = set(run_rows)
    contracts = {
        contract.agent_name: contract
        for contract in scoped(PromptContract, tenant).filter(agent_name__in={run.agent_name for run in runs})
    }
    effect_rows = list(
        scoped(ToolEffect, tenant)
        .filter(run__in=run_pks)
        .values_list("run_id", "tool_call_id", "status", "tool_name", "ended_at")
    )
    effects = _group((run_pk, (call_id, status)) for run_pk, call_id, status, _, _ in effect_rows)
    # A call the ledger saw start and never end: of unknown outcome once its run is no longer running.
    unfinished = _group(
        (run_pk, (call_id, tool_name))
        for run_pk, call_id, status, tool_name, ended_at in effect_rows
        if status == "started" and ended_at is None
    )
    pending = _group(
        (run_pk, facts.get("tool_call_id") if isinstance(facts, dict) else None)
        for run_pk, facts in scoped(RuntimeSpan, tenant)
        .filter(run__in=run_pks, kind=RuntimeSpan.Kind.APPROVAL_PENDING)
        .values_list("run_id", "facts")
    )
    # A call a later run answered (approved or denied) no longer waits: only the few runs that ended waiting pay.
    decided = {
        run.pk: {a.tool_call_id for a in approvals_of(run) if a.state != AWAITING_APPROVAL}
        for run in runs
        if run.pk in pending
    }
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
            sources=frozenset({run.source, *(source for source, _ in snapshot_facts.get(run.pk, []))}),
            parent_run_id=run.parent_run_id,
            parent_conversation_id=parents.get(run.parent_run_id) if run.parent_run_id else None,
            owned_conversation_ids=frozenset(ids & owned),
            tenant_run_ids=frozenset((ids | {conversation_id}) & tenant_run_ids),
            merged_conversation_ids=frozenset(merges.get(run.conversation_id, [])),
            prompt_contract=gates.PromptContractFact(contract.kind, contract.value) if contract else None,
            # No rows means no ledger was ingested for this run, which is not the same as "nothing started".
            tool_effects=run_effects or None,
            unfinished_effects=dict(unfinished.get(run.pk, [])) if run.state != RunState.RUNNING else {},
            pending_approvals=frozenset(
                str(call) for call in pending.get(run.pk, []) if call and call not in decided.get(run.pk, set())
            ),
            receipts=tuple(receipts.get(run.pk, [])),
            waits=tuple(waits.get(run.pk, [])),
            owner_principal_hash=owners.get(run.conversation_id) or "",
            run_principal_hashes=frozenset(p for _, p in snapshot_facts.get(run.pk, []) if p),
            idle_since=(run.last_snapshot_at or run.started_at) if run.state == RunState.RUNNING else None,
            stuck_after=timedelta(hours=tenant.stuck_after_hours),
        )
        contexts[run.pk] = (ctx, history, summaries[run.pk])
    return contexts


def build_context(run: Run, now: datetime) -> tuple[gates.AuditContext, list[ModelMessage]]:
    """Everything the gates need about one run (see `build_contexts`)."""
    return build_contexts(run.tenant, [run], now)[run.pk]


def _record_findings(
    tenant: Tenant, found: Sequence[tuple[Run, str, Iterable[gates.Finding]]], now: datetime
) -> int:
    """One audit event per finding, the first time it appears for its run (with its conversation's external id);
    returns how many were new."""
    by_run = {
        run.run_id: (run, conversation_id, {finding.key: finding for finding in findings})
        for run, conversation_id, findings in found
    }
    keys = {key for _, _, by_key in by_run.values() for key in by_key}
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
            conversation_id=finding.conversation_id or conversation_id,
            run_id=run.run_id,
            tool_call_hash=finding.tool_call_hash,
            observed_at=now,
            finding_key=key,
        )
        for run, conversation_id, by_key in by_run.values()
        for key, finding in by_key.items()
        if (run.run_id, key) not in known
    ]
    # ignore_conflicts: a concurrent audit of the same run may have written the same finding a moment ago.
    AuditEvent.objects.bulk_create(new, ignore_conflicts=True, batch_size=500)
    return len(new)


def _recheck_at(ctx: gates.AuditContext) -> datetime | None:
    """A live wait turns into STUCK at its deadline with nothing else happening, and so does a running run left
    without a snapshot for the tenant's `stuck_after_hours`: audit again then."""
    deadlines = [w.deadline for w in ctx.waits if not w.resolved and w.deadline > ctx.now]
    if ctx.idle_since is not None and ctx.idle_since + ctx.stuck_after > ctx.now:
        deadlines.append(ctx.idle_since + ctx.stuck_after)
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
        contexts = _audit_inputs(tenant, runs, now, histories)
        results = {run.pk: gates.run_gates_on_summary(contexts[run.pk][0], contexts[run.pk][2]) for run in runs}
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
        update_rows(RunVerdict, tenant.pk, changed, ["verdict", "findings", "repair_count", "updated_at", "recheck_at"])
        _record_findings(
            tenant, [(run, contexts[run.pk][0].conversation_id, results[run.pk].findings) for run in runs], now
        )
        list_columns.note_verdicts(tenant, {run.conversation_id for run in runs})
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


def get_run(tenant: Tenant, run_id: str, api_key: ApiKey | None = None) -> Run:
    """The run of `tenant` (for a client `api_key`, only in a conversation it wrote), else `UnknownRun`."""
    runs = runs_with_conversation(tenant).filter(run_id=run_id)
    if (readable := conversations_readable_by(api_key)) is not None:
        runs = runs.filter(conversation_id__in=readable)
    run = runs.first()
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
    """Re-audit every run whose stored verdict changes by itself by now (WAITING past its deadline, a running
    run gone quiet past the tenant's limit)."""
    now = now or timezone.now()
    return sum(refresh_tenant_verdicts(tenant, now=now, limit=None) for tenant in Tenant.objects.all())


DUE_ON_READ = 200


def refresh_tenant_verdicts(tenant: Tenant, *, now: datetime | None = None, limit: int | None = DUE_ON_READ) -> int:
    """Re-audit the tenant's runs whose verdict changed by itself by now (at most `limit`, oldest due first).

    The list and the overview call this before they read verdicts, so a run that went quiet shows STUCK there
    without waiting for `manage.py audit --refresh`; there is usually nothing due (one indexed query).
    """
    now = now or timezone.now()
    due = scoped(RunVerdict, tenant).filter(recheck_at__lte=now).order_by("recheck_at").values_list("run_id", flat=True)
    ids = list(due if limit is None else due[:limit])
    if not ids:
        return 0
    runs = list(runs_with_conversation(tenant).filter(id__in=ids))
    audit_runs(tenant, runs, now=now)
    return len(runs)
