"""GET /api/v1/search and GET /api/v1/conversations/<id>/messages: parse, call the service, answer JSON.

The API key decides the tenant; there is no way to name another one. Bad input answers 400 with the problem
named (a changed cursor, or one from another search, included); a conversation that is missing or another
tenant's answers the same 404. A search answers `total_matches` (messages) and `total_conversations` over all
pages, and `next_cursor` to pass as `cursor` for the next page (null on the last).
"""

from datetime import datetime
from typing import overload

from django.http import HttpRequest, JsonResponse
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET

from search_app.errors import NotFound, SearchError
from search_app.service import read_context, run_search
from sessions_app.api.auth import ApiRequest, api_error, api_key_required

API_SCOPES = ("conversation", "run", "tenant")
INT_BOUND = 2**31 - 1


@overload
def _int_param(request: HttpRequest, name: str, default: int) -> int: ...
@overload
def _int_param(request: HttpRequest, name: str, default: None) -> int | None: ...
def _int_param(request: HttpRequest, name: str, default: int | None) -> int | None:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw) if len(raw) <= 12 else None
    except ValueError:
        value = None
    if value is None or not -INT_BOUND <= value <= INT_BOUND:
        raise SearchError(f"'{name}' must be a whole number between {-INT_BOUND} and {INT_BOUND}, got {raw[:40]!r}.")
    return value


def _time_param(request: HttpRequest, name: str) -> datetime | None:
    raw = request.GET.get(name)
    if not raw:
        return None
    try:
        value = parse_datetime(raw)
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise SearchError(f"'{name}' must be an ISO 8601 time with a timezone, got {raw!r}.")
    return value


@require_GET
@api_key_required
def search(request: ApiRequest) -> JsonResponse:
    try:
        scope = request.GET.get("scope") or "conversation"
        if scope not in API_SCOPES:
            raise SearchError(f"Unknown scope {scope!r} for an API key: use one of {', '.join(API_SCOPES)}.")
        roles = [role for raw in request.GET.getlist("role") for role in raw.split(",") if role]
        response = run_search(
            tenant=request.tenant,
            query=request.GET.get("q", ""),
            scope=scope,
            conversation_id=request.GET.get("conversation_id") or None,
            run_id=request.GET.get("run_id") or None,
            roles=roles,
            agent=request.GET.get("agent") or None,
            since=_time_param(request, "since"),
            until=_time_param(request, "until"),
            limit=_int_param(request, "limit", None),
            cursor=request.GET.get("cursor"),
        )
    except SearchError as error:
        return api_error(400, str(error))
    return JsonResponse(response.as_dict(), json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required
def conversation_messages(request: ApiRequest, conversation_id: str) -> JsonResponse:
    try:
        around = _int_param(request, "around", None)
        if around is None:
            raise SearchError("'around' is required: the transcript position to read around.")
        window = read_context(
            tenant=request.tenant,
            conversation_id=conversation_id,
            run_id=request.GET.get("run_id") or None,
            position=around,
            before=_int_param(request, "before", 5),
            after=_int_param(request, "after", 5),
        )
    except SearchError as error:
        return api_error(400, str(error))
    except NotFound as error:
        return api_error(404, str(error))
    return JsonResponse(window.as_dict(), json_dumps_params={"ensure_ascii": False})
