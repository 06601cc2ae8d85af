"""GET /api/v1/conversations (the list, with its triage columns), GET /api/v1/conversations/<id> (one, with its
runs) and GET /api/v1/runs/<id> (its snapshots and tool-effect ledger), GET /api/v1/runs/<id>/snapshots (paged) and
GET /api/v1/runs/<id>/snapshots/diff (what changed between two). Cursor-paged and tenant-scoped; another
tenant's conversation or run answers 404 like a missing one."""

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from sessions_app.api import reads
from sessions_app.api.auth import ApiRequest, api_key_required
from sessions_app.api.search_params import parse_params
from sessions_app.models import Source


@require_GET
@api_key_required
def list_conversations(request: ApiRequest) -> JsonResponse:
    params = parse_params(reads.ConversationListParams, request.GET)
    return JsonResponse(reads.list_conversations(request.api_key, params), json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required
def get_conversation(request: ApiRequest, conversation_id: str) -> JsonResponse:
    answer = reads.get_conversation(request.api_key, conversation_id)
    return JsonResponse(answer, json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required
def get_run(request: ApiRequest, run_id: str) -> JsonResponse:
    return JsonResponse(reads.get_run(request.api_key, run_id), json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required
def run_snapshots(request: ApiRequest, run_id: str) -> JsonResponse:
    params = parse_params(reads.SnapshotListParams, request.GET)
    return JsonResponse(reads.run_snapshots(request.api_key, run_id, params), json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required
def snapshot_diff(request: ApiRequest, run_id: str) -> JsonResponse:
    params = parse_params(reads.SnapshotDiffParams, request.GET)
    return JsonResponse(reads.snapshot_diff(request.api_key, run_id, params), json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required(kind=Source.SERVER)
def transcript(request: ApiRequest, conversation_id: str) -> JsonResponse:
    params = parse_params(reads.TranscriptParams, request.GET)
    answer = reads.transcript(request.api_key, conversation_id, params)
    return JsonResponse(answer, json_dumps_params={"ensure_ascii": False})


@require_GET
@api_key_required(kind=Source.SERVER)
def audit_events(request: ApiRequest) -> JsonResponse:
    params = parse_params(reads.AuditEventParams, request.GET)
    return JsonResponse(reads.audit_events(request.api_key, params), json_dumps_params={"ensure_ascii": False})
