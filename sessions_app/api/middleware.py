"""Hostile input and failures at the edge, for every URL: never a 500 that shows anything, never a leak.

- A URL path or query parameter holding a NUL or control character answers 400 (JSON under /api/) before any
  view runs: nothing could store or look it up, and PostgreSQL refuses NUL outright.
- A request body over SESSIONDESK_MAX_PAYLOAD_BYTES answers 413 JSON on every API endpoint, whatever its method.
- The database going away answers 503 (JSON under /api/); Django reconnects on the next request.
- Every 503, whoever answers it (the database gone, a store too busy to take a write, /healthz), says when to
  retry (`Retry-After`), and every API answer is `Cache-Control: no-store, private`: it holds a tenant's data
  (transcripts, hits, verdicts), which no browser or proxy may keep.
- Any other unhandled error under /api/ answers a 500 JSON that says nothing about the error; it is logged.
- A body sent with `Transfer-Encoding: chunked` answers 411: Django reads a body by its Content-Length, so a chunked
  one would be read as empty (a snapshot taken as `{}`); refused, nothing is read or written.
- A page answered to a signed-in user is `Cache-Control: no-store, private` too: it holds the tenant's data.
- A request still running after SESSIONDESK_REQUEST_DEADLINE_SECONDS answers 503 with Retry-After: a timer signal
  (gunicorn's sync workers serve on their main thread) interrupts it, its transactions roll back, its database
  connections are closed (one may be mid-query) and the worker serves the next request. Every known path is bounded
  well below it (docs/SECURITY.md); this is the last line for one that is missed. Code inside one C call (a regex
  match, a query) is interrupted when the call returns; gunicorn's --timeout kills what never returns.
"""

import logging
import re
import signal
import threading
from collections.abc import Callable
from types import FrameType

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

from sessions_app.api.auth import api_error
from sessions_app.api.body import declared_length, too_large
from sessions_app.api.otlp import otlp_refusal
from sessions_app.core.api_input import unsafe_text_problem

logger = logging.getLogger("sessiondesk.api")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PATH_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
OTLP_PREFIX = "/v1/"
API_PREFIXES = ("/api/", OTLP_PREFIX)  # the JSON API and the OTLP receiver
UNAVAILABLE = "The database is unavailable; nothing was written. Try again shortly."
RETRY_AFTER_SECONDS = "5"
CHUNKED = "Send the body with a Content-Length: chunked request bodies are not read."
OVERDUE = "The request took longer than the server allows; nothing was written. Try again shortly."


class DeadlineExceeded(BaseException):
    """Raised into a request by the deadline timer. A BaseException, so no `except Exception` on the way (Django's
    own handlers among them) turns it into an answer before EdgeMiddleware does."""


def _overdue(signum: int, frame: FrameType | None) -> None:
    raise DeadlineExceeded


def _chunked(request: HttpRequest) -> bool:
    return "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIXES)


def _url_problem(request: HttpRequest) -> str | None:
    if _PATH_CONTROL.search(request.path_info) or unsafe_text_problem(request.path_info):
        return "The URL path contains a NUL or control character."
    for name, values in request.GET.lists():
        for value in (name, *values):
            if "\x00" in value or _CONTROL.search(value) or unsafe_text_problem(value):
                return f"Query parameter {name[:40]!r} contains a NUL or control character."
    return None


def _refusal(request: HttpRequest, status: int, message: str) -> HttpResponse:
    """The edge's own answer: a google.rpc.Status to an OTLP exporter, the API's JSON error under /api/, plain text
    elsewhere."""
    if request.path_info.startswith(OTLP_PREFIX):
        return otlp_refusal(request, status, message)
    if _is_api(request):
        return api_error(status, message)
    return HttpResponse(message, status=status, content_type="text/plain")


def _drop_broken_connections() -> None:
    """Close connections the failure left unusable, so the next request reconnects (also where no request
    signal does it, as under the test client)."""
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block and not conn.is_usable():
            conn.close()


class EdgeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = _url_problem(request)
        if problem:
            return _refusal(request, 400, problem)
        if _chunked(request):
            response: HttpResponse = _refusal(request, 411, CHUNKED)
        elif _is_api(request) and declared_length(request) > settings.SESSIONDESK_MAX_PAYLOAD_BYTES:
            response = _refusal(request, 413, too_large().message)
        else:
            response = self._within_deadline(request)
        user = getattr(request, "user", None)
        if _is_api(request) or (user is not None and user.is_authenticated):
            patch_cache_control(response, no_store=True, private=True)
        if response.status_code == 503 and not response.has_header("Retry-After"):
            response["Retry-After"] = RETRY_AFTER_SECONDS
        return response

    def _within_deadline(self, request: HttpRequest) -> HttpResponse:
        seconds = settings.SESSIONDESK_REQUEST_DEADLINE_SECONDS
        if seconds <= 0 or threading.current_thread() is not threading.main_thread():
            return self.get_response(request)  # signals reach only the main thread (runserver serves on others)
        if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
            return self.get_response(request)  # someone else's timer owns SIGALRM here; never disarm it
        previous = signal.signal(signal.SIGALRM, _overdue)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return self.get_response(request)
        except DeadlineExceeded:
            logger.error("request over the %ss deadline: %s %s", seconds, request.method, request.path_info[:200])
            for conn in connections.all(initialized_only=True):
                conn.close()
            return _refusal(request, 503, OVERDUE)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, (OperationalError, InterfaceError)) or (
            isinstance(exception, DatabaseError) and "connection" in str(exception).lower()
        ):
            logger.warning("database unavailable: %s", type(exception).__name__)
            _drop_broken_connections()
            return _refusal(request, 503, UNAVAILABLE)
        if _is_api(request):
            logger.error("unhandled API error %s on %s", type(exception).__name__, request.path_info[:200])
            return api_error(500, "Internal error; nothing about it is shown here. It was logged.")
        return None
