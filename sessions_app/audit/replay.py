"""Replay guarded by the audit: the one service an agent's resume goes through.

`replay_history` answers for a conversation's latest run (latest `started_at`, ties by id): the recovered
history as ModelMessagesTypeAdapter JSON when the six gates, run afresh with the principal the replay is asked
for, say READY; otherwise the gravest verdict and every finding with its guidance. Every request appends one
content-minimal audit event (allowed or refused, verdict, the requested principal's keyed hash).
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
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.export import export_conversation


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


def latest_run(conversation: Conversation) -> Run | None:
    return (
        scoped(Run, conversation.tenant)
        .filter(conversation=conversation, conversation__tenant_id=conversation.tenant_id)
        .select_related("conversation", "tenant")
        .order_by("-started_at", "-id")
        .first()
    )


def recovered_history_json(conversation: Conversation) -> str:
    """The conversation's recovered transcript as ModelMessagesTypeAdapter JSON, from the stored bytes."""
    return "".join(export_conversation(conversation, "json"))


def _decide(
    tenant: Tenant, conversation_id: str, requested: str, api_key: ApiKey | None, now: datetime
) -> ReplayAnswer:
    conversation = scoped(Conversation, tenant).filter(external_id=conversation_id).first()
    run = latest_run(conversation) if conversation is not None else None
    if conversation is None or run is None:
        raise UnknownConversation(conversation_id)
    if api_key is not None and api_key.kind == Source.CLIENT:
        # A client key may ask only for history it wrote: the run a resume would continue.
        if not scoped(Snapshot, tenant).filter(run=run, api_key=api_key).exists():
            raise UnknownConversation(conversation_id)
    ctx, messages = build_context(run, now)
    report = gates.run_gates(replace(ctx, replay_principal_hash=requested), messages)
    findings = [finding.as_dict() for finding in report.findings]
    history = recovered_history_json(conversation) if report.verdict == Verdict.READY else None
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
