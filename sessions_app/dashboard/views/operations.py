"""Operator actions on one conversation: re-audit its runs, re-index its transcript."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from search_app.index import reindex_conversation
from sessions_app.audit.service import reaudit_runs
from sessions_app.tenancy.permissions import Action, MemberRequest, get_conversation_for_member, member_view
from sessions_app.tenancy.scoping import runs_with_conversation


@require_POST
@member_view(Action.REAUDIT)
def reaudit(request: MemberRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation_for_member(request, conversation_id)
    runs = runs_with_conversation(request.tenant).filter(conversation=conversation)
    count = reaudit_runs(runs)
    messages.success(request, f"Re-audited {count} run{'s' if count != 1 else ''}; verdicts are current.")
    return redirect("conversation", conversation_id=conversation.external_id)


@require_POST
@member_view(Action.REINDEX)
def reindex(request: MemberRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation_for_member(request, conversation_id)
    count = reindex_conversation(conversation.tenant_id, conversation.pk)
    messages.success(request, f"Re-indexed {count} message{'s' if count != 1 else ''} for search.")
    return redirect("conversation", conversation_id=conversation.external_id)
