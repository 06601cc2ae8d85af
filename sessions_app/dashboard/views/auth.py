"""Login (axes lockout), the tenant switcher and the home redirect; logout and password change are Django's."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, PasswordResetConfirmView
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from sessions_app.tenancy.login_lockout import serialized
from sessions_app.tenancy.permissions import switch_tenant

_login = LoginView.as_view(template_name="registration/login.html", redirect_authenticated_user=True)


def login(request: HttpRequest) -> HttpResponseBase:
    """Django's LoginView; django-axes refuses locked accounts and addresses (sessions_app.tenancy.login_lockout).
    Attempts for one username run one at a time, so concurrent ones are all counted."""
    if request.method != "POST":
        return _login(request)
    with serialized(request.POST.get("username", "")):
        return _login(request)


class AcceptInvite(PasswordResetConfirmView):
    """An invite link (sessions_app.tenancy.administration.invite_path): the invited person sets a password and
    is logged in. Django's token view: the token leaves the URL for the session first, and stops working once
    the password is set."""

    template_name = "registration/invite_accept.html"
    success_url = reverse_lazy("conversations")
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"


accept_invite = AcceptInvite.as_view()


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
