"""Replay guarded by the audit: the one service an agent's resume goes through.

`replay_history` answers for a conversation's latest run (latest `started_at`, ties by id): the recovered
history as ModelMessagesTypeAdapter JSON when the six gates, run afresh with the principal the replay is asked
for, say READY; otherwise the gravest verdict and every finding with its guidance. Every request appends one
content-minimal audit event (allowed or refused, verdict, the requested principal's keyed hash).

Authority is decided per run. For a server key (or the dashboard), runs holding a snapshot a client key wrote are
quarantined: they neither decide the verdict nor appear in the history replayed, so a client that appended a run
(started in 2999, say) cannot make the owner's replay UNTRUSTED HISTORY; it stays on the latest trusted run. Only
when every run is client-written does the latest of them decide (UNTRUSTED HISTORY). A client key asks only for
conversations it wrote, and is answered for the latest run it wrote, which gate 2 finds untrusted.
"""

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import cast

from django.db import transaction
from django.utils import timezone

from sessions_app.audit import gates
from sessions_app.audit.events import record_event
from sessions_app.audit.inputs import AuditInputError, UnknownConversation, parse_principal
from sessions_app.audit.principals import principal_hash
from sessions_app.audit.service import build_context
from sessions_app.audit.vocabulary import EventClass, Verdict
from sessions_app.models import ApiKey, Conversation, Run, Snapshot, Source, Tenant
from sessions_app.tenancy.scoping import conversations_readable_by, runs_with_conversation, scoped
from sessions_app.transcripts.export import history_json


@dataclass(frozen=True)
class ReplayAnswer:
    conversation_id: str
    run_id: str
    verdict: str
    findings: list[dict[str, str]] = field(default_factory=list)
    messages_json: str | None = None  # a ModelMessagesTypeAdapter JSON list, only when READY

    @property
    def allowed(self) -> bool:
        return self.verdict == Verdict.READY and self.messages_json is not None


def client_written_runs(conversation: Conversation) -> set[int]:
    """The primary keys of the conversation's runs holding a snapshot some client key wrote."""
    tenant = conversation.tenant
    return set(
        scoped(Snapshot, tenant)
        .filter(run__tenant=tenant, run__conversation=conversation, api_key__tenant=tenant)
        .filter(api_key__kind=Source.CLIENT)
        .values_list("run_id", flat=True)
    )


def latest_run(
    conversation: Conversation, *, without: set[int] | None = None, api_key: ApiKey | None = None
) -> Run | None:
    """The conversation's latest run, leaving out the runs `without` (unless that leaves none), or for a client
    `api_key` the latest it wrote."""
    runs = runs_with_conversation(conversation.tenant).filter(conversation=conversation)
    if api_key is not None and api_key.kind == Source.CLIENT:
        runs = runs.filter(pk__in=scoped(Snapshot, conversation.tenant).filter(api_key=api_key).values("run_id"))
    elif without:
        trusted = runs.exclude(pk__in=without)
        runs = trusted if trusted.exists() else runs
    return runs.order_by("-started_at", "-id").first()


def recovered_history_json(conversation: Conversation, without: set[int] | None = None) -> str:
    """The conversation's recovered transcript as ModelMessagesTypeAdapter JSON, from the stored bytes, without
    the messages of the runs `without`."""
    return history_json(conversation, without or set())


def _decide(
    tenant: Tenant, conversation_id: str, requested: str, api_key: ApiKey | None, now: datetime
) -> ReplayAnswer:
    conversations = scoped(Conversation, tenant).filter(external_id=conversation_id)
    if (readable := conversations_readable_by(api_key)) is not None:
        conversations = conversations.filter(pk__in=readable)
    conversation = conversations.first()
    quarantined = client_written_runs(conversation) if conversation is not None else set()
    run = latest_run(conversation, without=quarantined, api_key=api_key) if conversation is not None else None
    if conversation is None or run is None:
        raise UnknownConversation(conversation_id)
    ctx, messages = build_context(run, now)
    report = gates.run_gates(replace(ctx, replay_principal_hash=requested), messages)
    findings = [finding.as_dict() for finding in report.findings]
    history = recovered_history_json(conversation, quarantined) if report.verdict == Verdict.READY else None
    return ReplayAnswer(conversation.external_id, run.run_id, report.verdict, findings, history)


def replay_history(
    tenant: Tenant,
    conversation_id: str,
    *,
    principal: object = None,
    api_key: ApiKey | None = None,
    actor: str = "",
    now: datetime | None = None,
) -> ReplayAnswer:
    """The history to resume `conversation_id` from, or the reasons not to; raises AuditInputError (400 for a
    bad principal, 404 for an unknown conversation) after recording the refusal."""
    now = now or timezone.now()
    error: AuditInputError | None = None
    answer: ReplayAnswer | None = None
    requested = ""
    with transaction.atomic():
        try:
            raw = parse_principal(principal)
            requested = principal_hash(tenant.id, raw or "")
            answer = _decide(tenant, conversation_id, requested, api_key, now)
        except AuditInputError as refused:
            error = refused
        record_event(
            tenant,
            EventClass.REPLAY_ALLOWED if answer is not None and answer.allowed else EventClass.REPLAY_REFUSED,
            actor=actor,
            conversation_id=conversation_id,
            run_id=answer.run_id if answer else "",
            verdict=answer.verdict if answer else "",
            principal_hash=requested,
            now=now,
        )
    if error is not None:
        raise error
    return cast(ReplayAnswer, answer)  # set whenever no refusal was caught
