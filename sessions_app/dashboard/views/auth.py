"""Login (axes lockout), accepting an invitation, the tenant switcher and the home redirect; logout and password
change are Django's."""

from typing import cast

from django.contrib import messages
from django.contrib.auth import login as auth_login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from sessions_app.dashboard.forms import USERNAME_UNAVAILABLE, InvitationSignupForm
from sessions_app.tenancy import administration as tenant_admin
from sessions_app.tenancy.login_lockout import serialized
from sessions_app.tenancy.permissions import SESSION_TENANT_KEY, switch_tenant

_login = LoginView.as_view(template_name="registration/login.html", redirect_authenticated_user=True)


def login(request: HttpRequest) -> HttpResponseBase:
    """Django's LoginView; django-axes refuses locked accounts and addresses (sessions_app.tenancy.login_lockout).
    Attempts for one username run one at a time, so concurrent ones are all counted."""
    if request.method != "POST":
        return _login(request)
    with serialized(request.POST.get("username", "")):
        return _login(request)


_INVITATION = "sessiondesk_invitation"


@require_GET
def invitation_link(request: HttpRequest, token: str) -> HttpResponse:
    """The link an admin sent: the token moves into the session and leaves the address bar (and any Referer)."""
    try:
        tenant_admin.open_invitation(token)
    except tenant_admin.InvitationUnusable as error:
        return render(request, "registration/invitation.html", {"refused": str(error)}, status=404)
    request.session[_INVITATION] = token
    return redirect("invitation")


@require_http_methods(["GET", "POST"])
def invitation(request: HttpRequest) -> HttpResponse:
    """Accept an invitation: someone signed in joins with one button; anyone else picks a username and a password
    (Django's UserCreationForm) and joins, in one transaction, or signs in first to join with an account they have."""
    token = request.session.get(_INVITATION, "")
    try:
        invited = tenant_admin.open_invitation(token)
    except tenant_admin.InvitationUnusable as error:
        return render(request, "registration/invitation.html", {"refused": str(error)}, status=404)
    signed_in = request.user.is_authenticated
    form = None if signed_in else InvitationSignupForm(request.POST or None, tenant_slug=invited.tenant.slug)
    if request.method == "POST" and (form is None or form.is_valid()):
        try:
            with transaction.atomic():
                new_user = None if form is None else form.save()
                # Without a form the person is signed in, so request.user is a User.
                membership = tenant_admin.accept_invitation(token, new_user or cast(User, request.user))
        except tenant_admin.InvitationUnusable as error:
            return render(request, "registration/invitation.html", {"refused": str(error)}, status=404)
        except IntegrityError:  # the name was taken between the form's check and the insert
            if form is None:  # only a new username can clash
                raise
            form.add_error("username", USERNAME_UNAVAILABLE)
        else:
            if new_user is not None:
                auth_login(request, new_user, backend="django.contrib.auth.backends.ModelBackend")
            request.session.pop(_INVITATION, None)
            request.session[SESSION_TENANT_KEY] = membership.tenant_id
            signed_in_as = "" if new_user is None else f" Sign in as {new_user.username} next time."
            messages.success(request, f"You joined {membership.tenant.name} as {membership.role}.{signed_in_as}")
            return redirect("conversations")
    context = {"invited": invited, "form": form, "login_url": f"{reverse('login')}?next={reverse('invitation')}"}
    return render(request, "registration/invitation.html", context, status=400 if form and form.errors else 200)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return redirect("conversations")


@login_required
@require_POST
def switch(request: HttpRequest) -> HttpResponse:
    membership = switch_tenant(request, request.POST.get("tenant", ""))
    if membership is None:
        messages.error(request, "You are not a member of that tenant.")
    # Back to the list: object URLs of the previous tenant would now answer 404.
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = ""
    return HttpResponseRedirect(target or "/conversations/")
