"""Outcome receipts, wait records and conversation merges of a run: the lists, and adding one (operators)."""

from collections.abc import Callable
from dataclasses import dataclass
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


def _page(request: MemberRequest, run: Run, refused: forms.Form | None = None, resume_token: str = "") -> HttpResponse:
    """The receipts page; a `refused` form is shown again in its place (400), the other forms empty."""

    def form_of[F: forms.Form](kind: type[F]) -> F:
        return refused if isinstance(refused, kind) else kind()

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
            "receipt_form": form_of(ReceiptForm),
            "wait_form": form_of(WaitForm),
            "merge_form": form_of(MergeForm),
            "resume_token": resume_token or None,
        },
        status=400 if refused else 200,
    )


@require_GET
@member_view(Action.VIEW_RECEIPTS)
def receipts_and_waits(request: MemberRequest, run_id: str) -> HttpResponse:
    run = get_run_for_member(request, run_id)
    return _page(request, run)


@dataclass(frozen=True)
class _Recorded:
    message: str
    resume_token: str = ""  # a generated wait token, shown once on this response


def _record_receipt(request: MemberRequest, run: Run, data: dict[str, Any]) -> _Recorded:
    _, report = evidence.add_receipt(request.tenant, {**data, "run_id": run.run_id})
    return _Recorded(f"Receipt recorded; the run was re-audited: its verdict is now {report.verdict}.")


def _record_wait(request: MemberRequest, run: Run, data: dict[str, Any]) -> _Recorded:
    deadline = data["deadline"]
    if timezone.is_naive(deadline):
        deadline = timezone.make_aware(deadline, UTC)
    wait = {"owner": data["owner"], "decision": data["decision"], "deadline": deadline.isoformat()}
    token = {"resume_token": data["resume_token"] or None}
    _, generated_token, _ = evidence.add_wait(request.tenant, {"run_id": run.run_id, **wait, **token})
    return _Recorded("Wait recorded; the run was re-audited.", generated_token or "")


def _record_merge(request: MemberRequest, run: Run, data: dict[str, Any]) -> _Recorded:
    conversation_id, merged = run.conversation.external_id, data["merged_conversation_id"]
    evidence.record_merge(request.tenant, conversation_id, merged, actor=request.user.get_username())
    return _Recorded("Merge recorded; the conversation's runs were re-audited.")


def _resolve_wait(request: MemberRequest, run: Run, data: dict[str, Any]) -> _Recorded:
    presented = {"run_id": run.run_id, "resume_token": data["resume_token"]}
    evidence.resolve_wait(request.tenant, presented, actor=request.user.get_username())
    return _Recorded("Wait resolved; the run was re-audited.")


def _on_audit_page(request: MemberRequest, run: Run, form: forms.Form) -> HttpResponse:
    # A wrong token is a form error (400): on pages, 403 means the role may not do this.
    return run_audit_page(request, run, form if isinstance(form, ResolveWaitForm) else None, status=400)


@dataclass(frozen=True)
class _Evidence:
    """One kind of evidence an operator records on a run: its form, what records it, the page a success goes to
    and the page a refused form is shown again on."""

    form: type[forms.Form]
    record: Callable[[MemberRequest, Run, dict[str, Any]], _Recorded]
    done: str
    refused: Callable[[MemberRequest, Run, forms.Form], HttpResponse]


EVIDENCE: dict[str, _Evidence] = {
    "receipt": _Evidence(ReceiptForm, _record_receipt, "receipts", _page),
    "wait": _Evidence(WaitForm, _record_wait, "receipts", _page),
    "merge": _Evidence(MergeForm, _record_merge, "receipts", _page),
    "wait-resolution": _Evidence(ResolveWaitForm, _resolve_wait, "run-audit", _on_audit_page),
}


@require_POST
@member_view(Action.ADD_RECEIPTS)
def record_evidence(request: MemberRequest, run_id: str, kind: str) -> HttpResponse:
    """Record a receipt, a wait, a conversation merge or a wait's resolution (`kind`, set by the URL) on the run;
    each re-audits what it touches. A refused form (or an AuditInputError) shows the page again with a 400."""
    run = get_run_for_member(request, run_id)
    what = EVIDENCE[kind]
    form = what.form(request.POST)
    try:
        recorded = what.record(request, run, form.cleaned_data) if form.is_valid() else None
    except AuditInputError as error:
        form.add_error(None, error.message)
        recorded = None
    if recorded is None:
        return what.refused(request, run, form)
    messages.success(request, recorded.message)
    if recorded.resume_token:
        # Shown once on this response, never stored in clear: no redirect that would lose it.
        response = _page(request, run, resume_token=recorded.resume_token)
        response["Cache-Control"] = "no-store"
        return response
    return redirect(what.done, run_id=run.run_id)
