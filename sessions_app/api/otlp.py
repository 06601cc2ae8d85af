"""POST /v1/traces: OTLP/HTTP trace export (protobuf or JSON, gzip or not), authenticated by the API's Bearer key.

So `OTEL_EXPORTER_OTLP_ENDPOINT=https://desk.example.com` and `OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20…`
point any OpenTelemetry exporter here. The answer is an ExportTraceServiceResponse in the request's encoding, its
partial success counting the spans not stored and why; a refused request answers a google.rpc.Status.
"""

import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from input_errors import RejectedInput
from sessions_app.api.auth import ApiRequest, api_key_required
from sessions_app.api.body import read_body
from sessions_app.ingest.otlp_wire import PROTOBUF, error_body, inflate, parse_request, request_encoding, response_body
from sessions_app.ingest.traces import ingest_export


def otlp_refusal(request: HttpRequest, status: int, message: str) -> HttpResponse:
    """A refused export as OTLP/HTTP answers it: a google.rpc.Status in the request's encoding (protobuf when the
    request's own type is not one OTLP has)."""
    try:
        encoding = request_encoding(request.content_type or "")
    except RejectedInput:
        encoding = PROTOBUF
    return HttpResponse(error_body(status, message, encoding), status=status, content_type=encoding)


@csrf_exempt  # a Bearer key, never a cookie, authenticates an export
@require_POST
def post_traces(request: HttpRequest) -> HttpResponse:
    response = _authenticated_export(request)
    if response.status_code in (401, 403) and response["Content-Type"] == "application/json":
        # The API's key check answers JSON; an exporter reads a Status (and keeps the challenge header).
        refusal = otlp_refusal(request, response.status_code, json.loads(response.content)["error"])
        if response.has_header("WWW-Authenticate"):
            refusal["WWW-Authenticate"] = response["WWW-Authenticate"]
        return refusal
    return response


@api_key_required
def _authenticated_export(request: ApiRequest) -> HttpResponse:
    encoding = PROTOBUF
    try:
        encoding = request_encoding(request.content_type or "")
        limit = settings.SESSIONDESK_MAX_PAYLOAD_BYTES
        data = inflate(read_body(request), request.headers.get("Content-Encoding", ""), limit)
        export = parse_request(data, encoding)
        stored = ingest_export(request.tenant, export, source=request.api_key.kind, api_key=request.api_key)
    except RejectedInput as error:
        # OTLP's own refusal: a google.rpc.Status in the request's encoding, not the API's JSON error.
        return HttpResponse(
            error_body(error.status, error.message, encoding), status=error.status, content_type=encoding
        )
    return HttpResponse(response_body(stored.rejected_spans, stored.message, encoding), content_type=encoding)
