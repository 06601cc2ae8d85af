"""Evidence an operator or a service records about runs: outcome receipts, waits (and their resolution), prompt
contracts and explicit conversation merges. Each re-audits the runs it touches; bad input changes nothing.

None of it holds message content: receipts hold a reference or digest, waits a hashed resume token,
contracts a hash or label, merges two conversation ids.
"""

import hmac
import secrets
from datetime import datetime
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from sessions_app.audit.digests import hash_resume_token
from sessions_app.audit.events import record_event
from sessions_app.audit.inputs import (
    AuditInputError,
    UnknownConversation,
    parse_prompt_contract,
    parse_receipt,
    parse_wait,
    parse_wait_resolution,
)
from sessions_app.audit.service import AuditReport, audit_run, get_run, reaudit_runs
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import Conversation, ConversationMerge, PromptContract, Receipt, RunVerdict, Tenant, Wait
from sessions_app.tenancy.scoping import runs_with_conversation, scoped


def _add_to_run[M: models.Model](
    tenant: Tenant, run_id: str, model: type[M], fields: dict[str, Any], now: datetime | None
) -> tuple[M, AuditReport]:
    """Create one `model` row for a run of this tenant and re-audit the run, in one transaction."""
    with transaction.atomic():
        run = get_run(tenant, run_id)
        row = model._default_manager.create(tenant=tenant, run=run, **fields)
        report = audit_run(run, now=now)
    return row, report


def add_receipt(tenant: Tenant, data: object, *, now: datetime | None = None) -> tuple[Receipt, AuditReport]:
    """Record a receipt for a run and re-audit it; bad input changes nothing."""
    parsed = parse_receipt(data)
    fields = {
        "effect": parsed.effect,
        "evidence": parsed.evidence,
        "checked_by": parsed.checked_by,
        "reference": parsed.reference,
    }
    return _add_to_run(tenant, parsed.run_id, Receipt, fields, now)


def add_wait(
    tenant: Tenant, data: object, *, now: datetime | None = None
) -> tuple[Wait, str | None, AuditReport]:
    """Record a wait and re-audit its run. Returns the resume token when we generated it (shown once)."""
    now = now or timezone.now()
    parsed = parse_wait(data, now=now)
    generated = None if parsed.resume_token else secrets.token_urlsafe(24)
    fields = {
        "owner": parsed.owner,
        "decision": parsed.decision,
        "deadline": parsed.deadline,
        "resume_token_hash": hash_resume_token(parsed.resume_token or generated or ""),
    }
    wait, report = _add_to_run(tenant, parsed.run_id, Wait, fields, now)
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
            EventClass.WAIT_RESOLVED,
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
        runs = runs_with_conversation(tenant).filter(agent_name=parsed.agent_name).order_by("-started_at", "-id")
        count = reaudit_runs(runs[:REAUDIT_INLINE_LIMIT], now=now)
        later = runs.values_list("id", flat=True)[REAUDIT_INLINE_LIMIT:]
        scoped(RunVerdict, tenant).filter(run_id__in=list(later)).update(recheck_at=now)
    return contract, count


def record_merge(
    tenant: Tenant, conversation_id: str, merged_conversation_id: str, *, actor: str = ""
) -> ConversationMerge:
    """Record that `merged_conversation_id`'s messages belong to `conversation_id` (SPEC gate 5's explicit
    merge), log it the first time, and re-audit the conversation's runs."""
    if not merged_conversation_id or merged_conversation_id == conversation_id:
        raise AuditInputError("A merge needs another, non-empty conversation id.")
    with transaction.atomic():
        conversation = scoped(Conversation, tenant).filter(external_id=conversation_id).first()
        if conversation is None:
            raise UnknownConversation(conversation_id)
        merge, created = ConversationMerge.objects.get_or_create(
            tenant=tenant,
            conversation=conversation,
            merged_external_id=merged_conversation_id[:200],
            defaults={"actor": actor[:200]},
        )
        if created:
            record_event(
                tenant, EventClass.CONVERSATIONS_MERGED, actor=actor, conversation_id=conversation.external_id
            )
        reaudit_runs(runs_with_conversation(tenant).filter(conversation=conversation))
    return merge
