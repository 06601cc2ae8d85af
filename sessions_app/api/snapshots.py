"""Ingestion endpoints: parse, call the ingestion service, answer JSON."""

import json

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST

from sessions_app.api.auth import ApiRequest, api_error, api_key_required
from sessions_app.ingest.payloads import IngestError, ToolEffectPayload, parse_snapshot
from sessions_app.ingest.service import ingest_snapshots

TOOL_EFFECT_STATUSES = ("started", "completed", "failed")


def _json_body(request: HttpRequest) -> object:
    limit = settings.SESSIONDESK_MAX_PAYLOAD_BYTES
    declared = int(request.headers.get("Content-Length") or 0)
    if declared > limit or len(request.body) > limit:
        raise IngestError(f"Payload is larger than the limit of {limit} bytes.", status=413)
    try:
        return json.loads(request.body)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise IngestError(f"Invalid JSON: {error}.") from None


@require_POST
@api_key_required
def post_snapshot(request: ApiRequest) -> JsonResponse:
    try:
        payload = parse_snapshot(_json_body(request))
        result = ingest_snapshots(
            request.tenant, [payload], source=request.api_key.kind, via="api", api_key=request.api_key
        )
    except IngestError as error:
        return api_error(error.status, error.message)
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


def parse_tool_effect(data: object) -> ToolEffectPayload:
    if not isinstance(data, dict):
        raise IngestError("A tool effect must be a JSON object.")
    missing = [name for name in ("run_id", "tool_call_id", "tool_name", "status") if not data.get(name)]
    if missing:
        raise IngestError(f"Missing field(s): {', '.join(missing)}.")
    if data["status"] not in TOOL_EFFECT_STATUSES:
        raise IngestError(f"'status' must be one of {', '.join(TOOL_EFFECT_STATUSES)}.")
    stamps = {}
    for name in ("started_at", "ended_at"):
        value = data.get(name)
        stamps[name] = parse_datetime(value) if isinstance(value, str) else None
        if value and stamps[name] is None:
            raise IngestError(f"'{name}' must be an ISO 8601 datetime.")
    return ToolEffectPayload(
        run_id=str(data["run_id"]),
        tool_call_id=str(data["tool_call_id"]),
        tool_name=str(data["tool_name"]),
        status=data["status"],
        **stamps,
    )


@require_POST
@api_key_required
def post_tool_effect(request: ApiRequest) -> JsonResponse:
    """The harness's tool-effect ledger: started / completed / failed, never arguments or results."""
    try:
        effect = parse_tool_effect(_json_body(request))
        ingest_snapshots(request.tenant, [], source=request.api_key.kind, via="api", tool_effects=[effect])
    except IngestError as error:
        return api_error(error.status, error.message)
    return JsonResponse({"run_id": effect.run_id, "status": effect.status}, status=200)
