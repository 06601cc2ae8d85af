"""Tenant admin pages: members and roles, API keys (shown once), redaction patterns, retention, costs."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from sessions_app.dashboard.forms import (
    ApiKeyForm,
    CostSettingsForm,
    InvitationForm,
    RedactionPatternsForm,
    RetentionForm,
    RoleForm,
    price_lines,
)
from sessions_app.models import ApiKey, Invitation, Membership, Role
from sessions_app.tenancy import administration as tenant_admin
from sessions_app.tenancy import api_keys as api_key_service
from sessions_app.tenancy.permissions import (
    Action,
    MemberRequest,
    get_api_key_for_member,
    get_membership_for_member,
    member_view,
)
from sessions_app.tenancy.scoping import get_scoped_or_404, scoped
from sessions_app.transcripts import retention as retention_service

_NEW_INVITE = "sessiondesk_new_invite"


def _shown_once[M: (Invitation, ApiKey)](
    request: MemberRequest, session_key: str, model: type[M], secret: str
) -> tuple[M | None, str | None]:
    """What the POST before the redirect created, and its one-time `secret`, taken out of the session (so a
    reload shows nothing); (None, None) when there is none or it is gone."""
    pending = request.session.pop(session_key, None)
    if not pending:
        return None, None
    created = scoped(model, request.tenant).filter(pk=pending["pk"]).first()
    return created, pending[secret] if created else None


@require_http_methods(["GET", "POST"])
@member_view(Action.MANAGE_MEMBERS)
def members(request: MemberRequest) -> HttpResponse:
    """Members, roles and open invitations. An admin creates an invitation and its one-time link is shown once
    after the redirect (post/redirect/get: a reload invites nobody again)."""
    form = InvitationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        invitation, raw = tenant_admin.create_invitation(
            request.tenant, form.cleaned_data["role"], form.cleaned_data["note"], actor=request.user
        )
        link = request.build_absolute_uri(reverse("invitation-link", args=[raw]))
        request.session[_NEW_INVITE] = {"pk": invitation.pk, "link": link}
        return redirect("members")
    invited, invite_link = _shown_once(request, _NEW_INVITE, Invitation, "link")
    rows = scoped(Membership, request.tenant).select_related("user").order_by("user__username")
    open_invitations = (
        scoped(Invitation, request.tenant)
        .filter(accepted_at=None, revoked_at=None, expires_at__gt=timezone.now())
        .order_by("-created_at", "-pk")
    )
    context = {
        "section": "admin",
        "tab": "members",
        "form": form,
        "rows": rows,
        "roles": Role.choices,
        "invitations": open_invitations,
        "invited": invited,
        "invite_link": invite_link,
        "invite_days": tenant_admin.INVITATION_DAYS,
    }
    response = render(request, "admin_members.html", context, status=400 if form.errors else 200)
    response["Cache-Control"] = "no-store"  # the link is in this one response only
    return response


@require_POST
@member_view(Action.MANAGE_MEMBERS)
def withdraw_invitation(request: MemberRequest, pk: int) -> HttpResponse:
    invitation = get_scoped_or_404(Invitation, request.tenant, pk=pk)
    if tenant_admin.withdraw_invitation(invitation, actor=request.user):
        messages.success(request, "Withdrew the invitation; its link no longer works.")
    else:
        messages.info(request, "That invitation was already accepted or withdrawn; nothing changed.")
    return redirect("members")


@require_POST
@member_view(Action.MANAGE_MEMBERS)
def change_role(request: MemberRequest, pk: int) -> HttpResponse:
    membership = get_membership_for_member(request, pk)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a role: support, operator or admin.")
        return redirect("members")
    try:
        changed = tenant_admin.change_role(membership, form.cleaned_data["role"], actor=request.user)
    except tenant_admin.AdminError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{changed.user.get_username()} is now {changed.role}.")
    return redirect("members")


@require_POST
@member_view(Action.MANAGE_MEMBERS)
def remove_member(request: MemberRequest, pk: int) -> HttpResponse:
    membership = get_membership_for_member(request, pk)
    try:
        tenant_admin.remove_member(membership, actor=request.user)
    except tenant_admin.AdminError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Removed {membership.user.get_username()}.")
    return redirect("members")


_NEW_KEY = "sessiondesk_new_api_key"


@require_http_methods(["GET", "POST"])
@member_view(Action.MANAGE_API_KEYS)
def api_keys(request: MemberRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        new_key, new_raw = api_key_service.create_api_key(
            request.tenant, form.cleaned_data["kind"], form.cleaned_data["label"], actor=request.user.get_username()
        )
        # Post/redirect/get: the key waits in the server-side session for the next page, which shows it once;
        # reloading that page shows nothing and creates nothing.
        request.session[_NEW_KEY] = {"pk": new_key.pk, "raw": new_raw}
        return redirect("api-keys")
    created, raw_key = _shown_once(request, _NEW_KEY, ApiKey, "raw")
    keys = scoped(ApiKey, request.tenant).order_by("-created_at", "-pk")
    response = render(
        request,
        "admin_api_keys.html",
        {"section": "admin", "tab": "keys", "form": form, "keys": keys, "raw_key": raw_key, "created": created},
        status=400 if form.errors else 200,
    )
    # The raw key is in this one response only: keep it out of every cache.
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@member_view(Action.MANAGE_API_KEYS)
def revoke_key(request: MemberRequest, pk: int) -> HttpResponse:
    key = get_api_key_for_member(request, pk)
    if key.revoked_at is None:
        api_key_service.revoke_api_key(key, actor=request.user.get_username())
        messages.success(request, f"Revoked key {key.prefix}…; requests with it now get 401.")
    return redirect("api-keys")


@require_http_methods(["GET", "POST"])
@member_view(Action.MANAGE_REDACTION)
def redaction(request: MemberRequest) -> HttpResponse:
    initial = {"patterns": "\n".join(request.tenant.redaction_patterns or [])}
    form = RedactionPatternsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        tenant_admin.set_redaction_patterns(request.tenant, form.cleaned_data["patterns"], actor=request.user)
        messages.success(request, "Redaction patterns saved.")
        return redirect("redaction")
    return render(
        request,
        "admin_redaction.html",
        {"section": "admin", "tab": "redaction", "form": form},
        status=400 if form.errors else 200,
    )


@require_http_methods(["GET", "POST"])
@member_view(Action.MANAGE_RETENTION)
def retention(request: MemberRequest) -> HttpResponse:
    form = RetentionForm(request.POST or None, initial={"retention_days": request.tenant.retention_days})
    if request.method == "POST" and form.is_valid():
        tenant_admin.set_retention(request.tenant, form.cleaned_data["retention_days"], actor=request.user)
        if request.POST.get("apply_now"):
            result = retention_service.apply_retention(request.tenant)
            messages.success(request, f"Retention saved; {result.deleted} conversation(s) deleted.")
        else:
            messages.success(request, "Retention saved.")
        return redirect("retention")
    preview = retention_service.expired_conversations(request.tenant).count() if request.tenant.retention_days else 0
    return render(
        request,
        "admin_retention.html",
        {"section": "admin", "tab": "retention", "form": form, "expired_count": preview},
        status=400 if form.errors else 200,
    )


@require_http_methods(["GET", "POST"])
@member_view(Action.MANAGE_COSTS)
def costs(request: MemberRequest) -> HttpResponse:
    """Negotiated model prices and the hours after which a quiet running run is STUCK."""
    tenant = request.tenant
    initial = {"stuck_after_hours": tenant.stuck_after_hours, "prices": price_lines(tenant.price_overrides or {})}
    form = CostSettingsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        tenant_admin.set_costs(
            tenant, form.cleaned_data["stuck_after_hours"], form.cleaned_data["prices"], actor=request.user
        )
        messages.success(request, "Prices and the STUCK threshold saved.")
        return redirect("costs")
    return render(
        request,
        "admin_costs.html",
        {"section": "admin", "tab": "costs", "form": form},
        status=400 if form.errors else 200,
    )
