"""GET /api/v1/search and GET /api/v1/conversations/<id>/messages: parse, call search, answer JSON.

The API key decides the tenant; there is no way to name another one. Bad input answers 400 with the problem
named (a changed cursor, or one from another search, included); a conversation that is missing or another
tenant's answers the same 404. A search answers `total_matches` (messages) and `total_conversations` over all
pages, and `next_cursor` to pass as `cursor` for the next page (null on the last). A client key (browser-facing)
reads and searches only conversations it wrote: any other answers like a missing one, and a tenant-wide search is
a 403.
"""

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from search_app.context import read_context
from search_app.service import run_search
from sessions_app.api.auth import ApiRequest, api_key_required
from sessions_app.api.search_params import ContextParams, SearchParams, parse_params


@require_GET
@api_key_required
def search(request: ApiRequest) -> JsonResponse:
    params = parse_params(SearchParams, request.GET).model_dump()
    response = run_search(tenant=request.tenant, api_key=request.api_key, **params)
    return JsonResponse(response.as_dict(), json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required
def conversation_messages(request: ApiRequest, conversation_id: str) -> JsonResponse:
    params = parse_params(ContextParams, request.GET).model_dump()
    window = read_context(tenant=request.tenant, conversation_id=conversation_id, api_key=request.api_key, **params)
    return JsonResponse(window.as_dict(), json_dumps_params={"ensure_ascii": False})
