"""Outcome receipts, wait records and conversation merges of a run: the lists, and adding one (operators)."""

from collections.abc import Callable
from datetime import UTC
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from sessions_app.audit import evidence
from sessions_app.audit import listing as audit_listing
from sessions_app.audit.inputs import AuditInputError
from sessions_app.dashboard.forms import ReceiptForm, ResolveWaitForm, WaitForm
from sessions_app.dashboard.views.audit import run_audit_page
from sessions_app.models import ConversationMerge, Run
from sessions_app.tenancy.permissions import Action, MemberRequest, get_run_for_member, member_view
from sessions_app.tenancy.scoping import scoped


class MergeForm(forms.Form):
    merged_conversation_id = forms.CharField(
        max_length=200,
        label="Conversation id merged into this one",
        help_text="Only when its messages truly belong to this conversation (SCOPE DRIFT then stops naming them).",
    )


def _page(
    request: MemberRequest,
    run: Run,
    receipt_form: ReceiptForm,
    wait_form: WaitForm,
    status: int = 200,
    resume_token: str | None = None,
    merge_form: MergeForm | None = None,
) -> HttpResponse:
    return render(
        request,
        "receipts.html",
        {
            "section": "conversations",
            "run": run,
            "audit": audit_listing.run_audit(request.tenant, run),
            "merges": scoped(ConversationMerge, request.tenant)
            .filter(conversation_id=run.conversation_id)
            .order_by("-created_at", "-pk"),
            "receipt_form": receipt_form,
            "wait_form": wait_form,
            "merge_form": merge_form or MergeForm(),
            "resume_token": resume_token,
        },
        status=status,
    )


@require_GET
@member_view(Action.VIEW_RECEIPTS)
def receipts_and_waits(request: MemberRequest, run_id: str) -> HttpResponse:
    run = get_run_for_member(request, run_id)
    return _page(request, run, ReceiptForm(), WaitForm())


def _record(request: MemberRequest, form: forms.Form, record: Callable[[dict[str, Any]], str]) -> bool:
    """Whether the bound `form` is valid and `record(cleaned_data)` took it, its answer then shown as the success
    message; an AuditInputError it raises becomes the form's error, for the page to show again."""
    if not form.is_valid():
        return False
    try:
        message = record(form.cleaned_data)
    except AuditInputError as error:
        form.add_error(None, error.message)
        return False
    messages.success(request, message)
    return True


@require_POST
@member_view(Action.ADD_RECEIPTS)
def add_receipt(request: MemberRequest, run_id: str) -> HttpResponse:
    run = get_run_for_member(request, run_id)
    form = ReceiptForm(request.POST)

    def record(data: dict[str, Any]) -> str:
        _, report = evidence.add_receipt(request.tenant, {**data, "run_id": run.run_id})
        return f"Receipt recorded; the run was re-audited: its verdict is now {report.verdict}."

    if _record(request, form, record):
        return redirect("receipts", run_id=run.run_id)
    return _page(request, run, form, WaitForm(), status=400)


@require_POST
@member_view(Action.ADD_RECEIPTS)
def add_wait(request: MemberRequest, run_id: str) -> HttpResponse:
    run = get_run_for_member(request, run_id)
    form = WaitForm(request.POST)
    generated_tokens: list[str] = []

    def record(data: dict[str, Any]) -> str:
        deadline = data["deadline"]
        if timezone.is_naive(deadline):
            deadline = timezone.make_aware(deadline, UTC)
        _, generated_token, _ = evidence.add_wait(
            request.tenant,
            {
                "run_id": run.run_id,
                "owner": data["owner"],
                "decision": data["decision"],
                "deadline": deadline.isoformat(),
                "resume_token": data["resume_token"] or None,
            },
        )
        if generated_token:
            generated_tokens.append(generated_token)
        return "Wait recorded; the run was re-audited."

    if not _record(request, form, record):
        return _page(request, run, ReceiptForm(), form, status=400)
    if generated_tokens:
        # Shown once on this response, never stored in clear: no redirect that would lose it.
        response = _page(request, run, ReceiptForm(), WaitForm(), resume_token=generated_tokens[0])
        response["Cache-Control"] = "no-store"
        return response
    return redirect("receipts", run_id=run.run_id)


@require_POST
@member_view(Action.ADD_RECEIPTS)
def add_merge(request: MemberRequest, run_id: str) -> HttpResponse:
    """Record that another conversation id's messages belong to this run's conversation; re-audits its runs."""
    run = get_run_for_member(request, run_id)
    form = MergeForm(request.POST)

    def record(data: dict[str, Any]) -> str:
        evidence.record_merge(
            request.tenant,
            run.conversation.external_id,
            data["merged_conversation_id"],
            actor=request.user.get_username(),
        )
        return "Merge recorded; the conversation's runs were re-audited."

    if _record(request, form, record):
        return redirect("receipts", run_id=run.run_id)
    return _page(request, run, ReceiptForm(), WaitForm(), status=400, merge_form=form)


@require_POST
@member_view(Action.ADD_RECEIPTS)
def resolve_wait(request: MemberRequest, run_id: str) -> HttpResponse:
    """Resolve one of the run's open waits by its resume token (from the run's audit page); re-audits the run."""
    run = get_run_for_member(request, run_id)
    form = ResolveWaitForm(request.POST)

    def record(data: dict[str, Any]) -> str:
        evidence.resolve_wait(
            request.tenant,
            {"run_id": run.run_id, "resume_token": data["resume_token"]},
            actor=request.user.get_username(),
        )
        return "Wait resolved; the run was re-audited."

    # A wrong token is a form error (400): on pages, 403 means the role may not do this.
    if _record(request, form, record):
        return redirect("run-audit", run_id=run.run_id)
    return run_audit_page(request, run, form, status=400)
