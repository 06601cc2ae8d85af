"""Ingestion endpoints: parse, call the ingestion service, answer JSON."""

from django.http import JsonResponse
from django.views.decorators.http import require_POST

from sessions_app.api.auth import ApiRequest, api_key_required
from sessions_app.api.body import json_body
from sessions_app.ingest.payloads import parse_snapshot, parse_tool_effect
from sessions_app.ingest.service import ingest_snapshots


@require_POST
@api_key_required
def post_snapshot(request: ApiRequest) -> JsonResponse:
    payload = parse_snapshot(json_body(request), strings_checked=True)
    result = ingest_snapshots(
        request.tenant, [payload], source=request.api_key.kind, via="api", api_key=request.api_key
    )
    created = bool(result.created)
    return JsonResponse(
        {
            "snapshot_id": (result.created or result.repeated)[0],
            "run_id": payload.run_id,
            "conversation_id": payload.conversation_id,
            "created": created,
            "new_messages": result.new_messages,
        },
        status=201 if created else 200,
    )


@require_POST
@api_key_required
def post_tool_effect(request: ApiRequest) -> JsonResponse:
    """The harness's tool-effect ledger: started / completed / failed, never arguments or results."""
    effect = parse_tool_effect(json_body(request))
    ingest_snapshots(
        request.tenant, [], source=request.api_key.kind, via="api", tool_effects=[effect], api_key=request.api_key
    )
    return JsonResponse({"run_id": effect.run_id, "status": effect.status}, status=200)
