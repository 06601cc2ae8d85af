"""What a search covers: the tenants searched, and the conversation or run its parameters or query name.

Anything outside what the caller may see answers exactly like something that does not exist.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from search_app.errors import NEEDS_CONVERSATION, NEEDS_RUN, SearchError
from sessions_app.models import ApiKey, Conversation, Run, Tenant
from sessions_app.tenancy.scoping import conversations_readable_by, scoped

CLIENT_KEY_SCOPE = (
    "A client key searches one conversation it wrote (scope 'conversation' or 'run'), never a whole tenant."
)


def no_history_for_run(run_id: str) -> str:
    return f"No persisted history for run '{run_id}'."


def no_history_for_conversation(conversation_id: str) -> str:
    return f"No persisted history for conversation '{conversation_id}'."


def searchable_tenants(tenant: Tenant, scope: str, tenants: Sequence[Tenant] | None) -> list[Tenant]:
    """The caller's tenant, or for `scope="tenants"` every tenant in `tenants` (which must include it), once each."""
    if scope != "tenants":
        return [tenant]
    if not tenants or tenant.id not in {t.id for t in tenants}:
        raise SearchError("Searching several tenants needs the list of tenants the caller belongs to.")
    return list({t.id: t for t in tenants}.values())


@dataclass(frozen=True, slots=True)
class Target:
    """The conversation and run a search is narrowed to (primary keys), None for the whole of the tenants."""

    conversation_pk: int | None = None
    run_pk: int | None = None


def find_target(
    scope: str,
    tenant: Tenant,
    tenant_ids: tuple[int, ...],
    conversation_ref: str | None,
    run_ref: str | None,
    api_key: ApiKey | None = None,
) -> Target | str:
    """The conversation and run named (their ids as the caller knows them), or the message saying what is missing.

    A client `api_key` finds only conversations it wrote (and their runs); it cannot search a whole tenant.
    """
    readable = conversations_readable_by(api_key)
    if readable is not None and scope not in ("conversation", "run"):
        raise SearchError(CLIENT_KEY_SCOPE, status=403)
    conversation_pk = run_pk = None
    if scope == "conversation" and not conversation_ref:
        return NEEDS_CONVERSATION
    if conversation_ref:
        # The caller's conversation (conversation scope), or the conversation: filter within the searched tenants.
        conversations = Conversation.objects.filter(tenant_id__in=tenant_ids, external_id=conversation_ref)
        if scope == "conversation":
            conversations = scoped(Conversation, tenant).filter(external_id=conversation_ref)
        if readable is not None:
            conversations = conversations.filter(pk__in=readable)
        conversation_pk = conversations.order_by("id").values_list("id", flat=True).first()
        if conversation_pk is None:
            return no_history_for_conversation(conversation_ref)
    if scope == "run" and not run_ref:
        return NEEDS_RUN
    if run_ref:
        runs = Run.objects.filter(tenant_id__in=tenant_ids, run_id=run_ref)
        if conversation_pk is not None:
            runs = runs.filter(conversation_id=conversation_pk)
        elif readable is not None:
            runs = runs.filter(conversation_id__in=readable)
        run_pk = runs.order_by("id").values_list("id", flat=True).first()
        if run_pk is None:
            return no_history_for_run(run_ref)
    return Target(conversation_pk, run_pk)
