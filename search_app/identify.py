"""Identification: the conversations, runs and tool calls whose id is exactly the query, found before ranking."""

from collections.abc import Sequence

from search_app.backends.base import json_member
from search_app.results import Identified
from sessions_app.models import Conversation, Run, Tenant, ToolEffect, TranscriptEntry

MAX_IDENTIFIED = 10
MAX_ID_CHARS = 400


def identify(
    query: str, tenants: Sequence[Tenant], conversation_pk: int | None = None, run_pk: int | None = None
) -> list[Identified]:
    """The conversations, runs and tool-call messages whose id is exactly `query` (stripped), within the scope.

    A tool call is found through the harness's tool-effect ledger (an index on tenant and call id), then its call
    and result messages in the runs it names by the id as it stands in their JSON, matched whole. Reading every
    message's JSON instead would cost a scan of the scope on every search; a call the ledger never recorded is
    found by the words of its arguments and result, not by its id.
    """
    candidate = query.strip()
    if not candidate or len(candidate) > MAX_ID_CHARS:
        return []
    slugs = {t.id: t.slug for t in tenants}
    found: list[Identified] = []
    if run_pk is None:
        conversations = Conversation.objects.filter(tenant_id__in=slugs, external_id=candidate)
        if conversation_pk is not None:
            conversations = conversations.filter(id=conversation_pk)
        for tenant_id, external_id in conversations.order_by("id").values_list("tenant_id", "external_id")[:3]:
            found.append(Identified("conversation", slugs[tenant_id], external_id))
    runs = Run.objects.filter(tenant_id__in=slugs, run_id=candidate)
    if conversation_pk is not None:
        runs = runs.filter(conversation_id=conversation_pk)
    if run_pk is not None:
        runs = runs.filter(id=run_pk)
    for tenant_id, external_id, run in (
        runs.filter(conversation__tenant_id__in=slugs)
        .order_by("id")
        .values_list("tenant_id", "conversation__external_id", "run_id")[:3]
    ):
        found.append(Identified("run", slugs[tenant_id], external_id, run))
    ledger = ToolEffect.objects.filter(tenant_id__in=slugs, tool_call_id=candidate)
    if run_pk is not None:
        ledger = ledger.filter(run_id=run_pk)
    elif conversation_pk is not None:
        ledger = ledger.filter(run__tenant_id__in=slugs, run__conversation_id=conversation_pk)
    run_pks = list(ledger.values_list("run_id", flat=True)[:MAX_IDENTIFIED])
    if not run_pks:
        return found
    entries = TranscriptEntry.objects.filter(tenant_id__in=slugs, run_id__in=run_pks, summary_artifact=False)
    calls = entries.filter(message__tenant_id__in=slugs, message__data__contains=json_member("tool_call_id", candidate))
    for tenant_id, external_id, run, position, role in calls.order_by("conversation_id", "position").values_list(
        "tenant_id", "conversation__external_id", "run__run_id", "position", "role"
    )[:MAX_IDENTIFIED]:
        found.append(Identified("tool_call", slugs[tenant_id], external_id, run, position, role))
    return found
