"""Login (rate-limited), the tenant switcher and the home redirect; logout and password change are Django's."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from sessions_app.tenancy import login_throttle
from sessions_app.tenancy.permissions import switch_tenant

_login = LoginView.as_view(template_name="registration/login.html", redirect_authenticated_user=True)


def _client_address(request: HttpRequest) -> str:
    # REMOTE_ADDR only: X-Forwarded-For is client-controlled unless a trusted proxy rewrites it.
    return request.META.get("REMOTE_ADDR", "")


def login(request: HttpRequest) -> HttpResponseBase:
    """Django's LoginView behind a limit on failed attempts per username and per address."""
    if request.method != "POST":
        return _login(request)
    username = request.POST.get("username", "")
    address = _client_address(request)
    if login_throttle.is_blocked(username, address):
        return render(
            request,
            "registration/login.html",
            {"throttled": True, "minutes": login_throttle.WINDOW_SECONDS // 60},
            status=429,
        )
    response = _login(request)
    if response.status_code == 302:
        login_throttle.record_success(username, address)
    else:
        login_throttle.record_failure(username, address)
    return response


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
