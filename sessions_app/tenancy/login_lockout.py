"""Login protection with django-axes: a per-account lockout with a higher per-address ceiling, in the database.

- Accounts: SESSIONDESK_LOGIN_ACCOUNT_LIMIT failures (default 5) for one username lock that username for
  AXES_COOLOFF_TIME, from any address. Addresses: SESSIONDESK_LOGIN_ADDRESS_LIMIT failures (default 50) from one
  client address lock the address, so a proxy that every user shares does not lock out the innocent after one
  person's typos, while one host cannot try many names for long.
- The client address is REMOTE_ADDR, unless REMOTE_ADDR is one of SESSIONDESK_TRUSTED_PROXIES: then the
  right-most X-Forwarded-For address that is not itself a trusted proxy (what the proxy saw). A header from anyone
  else is ignored, so it cannot be used to pick a fresh address per attempt.
- State is axes' AccessAttempt table: every worker reads and writes the same rows. Attempts for one username are
  serialized by a row lock (`LoginGate`), held from before the lockout check until the failure is recorded, so
  concurrent attempts count: the sixth of twelve simultaneous wrong passwords is refused without a password check.
"""

import hashlib
import ipaddress
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from sessions_app.models import LoginGate


def account_limit() -> int:
    return settings.SESSIONDESK_LOGIN_ACCOUNT_LIMIT


def address_limit() -> int:
    return settings.SESSIONDESK_LOGIN_ADDRESS_LIMIT


def _is_trusted(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    for trusted in settings.SESSIONDESK_TRUSTED_PROXIES:
        try:
            if ip in ipaddress.ip_network(trusted, strict=False):
                return True
        except ValueError:
            continue
    return False


def client_address(request: HttpRequest) -> str:
    """AXES_CLIENT_IP_CALLABLE: REMOTE_ADDR, or what a configured trusted proxy says it saw."""
    remote = str(request.META.get("REMOTE_ADDR", ""))
    if not _is_trusted(remote):
        return remote
    forwarded = [a.strip() for a in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",") if a.strip()]
    for address in reversed(forwarded):
        if not _is_trusted(address):
            try:
                return str(ipaddress.ip_address(address))
            except ValueError:
                return remote  # a proxy that passes garbage on: count it against the proxy itself
    return remote


class LockoutHandler(AxesDatabaseHandler):  # type: ignore[misc]  # django-axes ships no type information
    """Axes' database handler with two limits: failures per username and (higher) failures per address.

    Axes compares one number with AXES_FAILURE_LIMIT (the account limit): the larger of the username's failures
    and the address's failures scaled down by address_limit / account_limit, so the address counts as locked only
    at its own ceiling. A success clears the username's failures, not the address's.
    """

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        username = get_client_username(request, credentials)
        attempts = self.get_user_attempts(request, credentials)  # [by username, by address], cooled off
        sums = [sum(a.values_list("failures_since_start", flat=True)) for a in attempts]
        by_user = sums[0] if username is not None and sums else 0
        by_address = sums[-1] if sums else 0
        return max(by_user, by_address * account_limit() // max(address_limit(), 1))

    def user_logged_in(self, sender: object, request: HttpRequest, user: object, **kwargs: Any) -> None:
        super().user_logged_in(sender, request, user, **kwargs)
        username = get_client_username(request)
        if username:
            AccessAttempt.objects.filter(username=username).delete()


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the login form saying why, with 429."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(request, "registration/login.html", {"throttled": True, "minutes": minutes}, status=429)


_sqlite_lock = threading.Lock()


@contextmanager
def serialized(username: str) -> Iterator[None]:
    """One login attempt per username at a time, across workers: a row lock in a transaction around the check,
    the password test and the recording of the outcome."""

    key = hashlib.sha256(username.strip().lower().encode()).hexdigest()
    if connection.vendor == "sqlite":
        # SQLite has no row locks (select_for_update is a no-op) and one writer: one login at a time per process.
        with _sqlite_lock, transaction.atomic():
            LoginGate.objects.get_or_create(key=key)
            yield
        return
    with transaction.atomic():
        LoginGate.objects.get_or_create(key=key)
        LoginGate.objects.select_for_update().get(key=key)
        yield
