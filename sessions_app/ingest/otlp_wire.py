"""OTLP/HTTP on the wire: the request's media type and gzip, protobuf or OTLP/JSON decoding, the answer bodies, and
the spans as plain values. Pure (no Django).

An export request (protobuf or JSON, gzip or not) is decoded with the official `opentelemetry-proto` classes; the
answer is an ExportTraceServiceResponse, or a google.rpc.Status for a refused request, in the request's encoding.
What the spans mean (pydantic-ai's runs and their messages) is `ingest.otlp`'s.
"""

import base64
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.proto.trace.v1.trace_pb2 import Status as SpanStatus

from input_errors import RejectedInput
from sessions_app.core.api_input import decode_json

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

type Json = Any  # decoded JSON: dicts, lists, strings, numbers, booleans, None


class OtlpError(RejectedInput):
    """An export request we refuse whole (400 malformed, 413 too large, 415 wrong type or encoding)."""


# --- the request body ------------------------------------------------------------------------------------


def request_encoding(content_type: str) -> str:
    """PROTOBUF or JSON for a request's media type (parameters stripped), else a 415."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in (PROTOBUF, JSON):
        return media_type
    raise OtlpError(f"Send OTLP as '{PROTOBUF}' or '{JSON}', not '{media_type or 'nothing'}'.", status=415)


MAX_GZIP_MEMBERS = 16


def inflate(body: bytes, content_encoding: str, limit: int) -> bytes:
    """The body without its Content-Encoding (identity or gzip), every gzip member of it (a gzip file may be several
    concatenated, and each is part of the body); larger than `limit` once inflated is a 413, so a small gzip bomb
    costs no more than `limit` bytes of memory."""
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise OtlpError(f"Unsupported Content-Encoding '{encoding[:40]}': send gzip or nothing.", status=415)
    members: list[bytes] = []
    size = 0
    rest = body
    while True:
        if len(members) == MAX_GZIP_MEMBERS:
            # zlib hands each member's leftover input back as a copy, so members cost the body's size each.
            raise OtlpError(f"The gzip body has more than {MAX_GZIP_MEMBERS} members.")
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            members.append(inflater.decompress(rest, limit + 1 - size))
        except zlib.error as error:
            raise OtlpError(f"The gzip body cannot be decompressed ({error}).") from None
        size += len(members[-1])
        if size > limit or inflater.unconsumed_tail:
            raise OtlpError(f"Payload is larger than the limit of {limit} bytes once decompressed.", status=413)
        if not inflater.eof:
            raise OtlpError("The gzip body is truncated.")
        rest = inflater.unused_data
        if not rest:
            return b"".join(members)


def parse_request(data: bytes, encoding: str) -> ExportTraceServiceRequest:
    """An ExportTraceServiceRequest from its protobuf or OTLP/JSON bytes, or a 400 naming the problem."""
    request = ExportTraceServiceRequest()
    if encoding == PROTOBUF:
        try:
            request.ParseFromString(data)
        except (DecodeError, RecursionError) as error:
            raise OtlpError(f"Malformed protobuf ExportTraceServiceRequest ({str(error)[:200]}).") from None
        return request
    body = decode_json(data)  # the API's strict decoder: UTF-8, bounded depth, no NUL or lone surrogates
    if not isinstance(body, dict):
        raise OtlpError("An OTLP/JSON body is an object with 'resourceSpans'.")
    try:
        json_format.ParseDict(_ids_as_base64(body), request, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as error:
        raise OtlpError(f"Malformed OTLP/JSON ExportTraceServiceRequest ({str(error)[:200]}).") from None
    return request


_ID_KEYS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")


def _ids_as_base64(body: dict[str, Json]) -> dict[str, Json]:
    """OTLP/JSON writes trace and span ids as hex, where the protobuf JSON mapping expects base64 bytes."""

    def convert(span: Json, where: str) -> None:
        if not isinstance(span, dict):
            return
        for key in _ID_KEYS:
            value = span.get(key)
            if isinstance(value, str):
                try:
                    span[key] = base64.b64encode(bytes.fromhex(value)).decode()
                except ValueError:
                    raise OtlpError(f"{where}.{key} is not a hex id: {value[:40]!r}.") from None
        links = span.get("links")
        for number, link in enumerate(links if isinstance(links, list) else ()):
            convert(link, f"{where}.links[{number}]")

    for r, resource in enumerate(_list(body, "resourceSpans", "resource_spans")):
        for s, scope in enumerate(_list(resource, "scopeSpans", "scope_spans")):
            for n, span in enumerate(_list(scope, "spans")):
                convert(span, f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]")
    return body


def _list(container: Json, *keys: str) -> list[Json]:
    if not isinstance(container, dict):
        return []
    for key in keys:
        value = container.get(key)
        if isinstance(value, list):
            return value
    return []


def response_body(rejected: int, message: str, encoding: str) -> bytes:
    """The ExportTraceServiceResponse in the request's encoding (partial success only when something was)."""
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.CopyFrom(ExportTracePartialSuccess(rejected_spans=rejected, error_message=message))
    if encoding == PROTOBUF:
        return response.SerializeToString()
    return json_format.MessageToJson(response, indent=None).encode()


def error_body(status: int, message: str, encoding: str) -> bytes:
    """A google.rpc.Status, as OTLP/HTTP answers a refused request, in the request's encoding."""
    payload: Message = Status(code=_RPC_CODES.get(status, 3), message=message)
    if encoding == PROTOBUF:
        return payload.SerializeToString()
    return json_format.MessageToJson(payload, indent=None).encode()


# HTTP status to the google.rpc code OTLP pairs it with: INVALID_ARGUMENT, UNAUTHENTICATED, RESOURCE_EXHAUSTED…
_RPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 413: 8, 415: 3, 503: 14}


# --- spans as plain values ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpanFacts:
    """One span, as plain values."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    scope: str
    started_at: datetime
    ended_at: datetime
    failed: bool
    attributes: Mapping[str, Json]

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or "")


def _value(value: AnyValue) -> Json:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: _value(item.value) for item in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind) if kind else None


def _time(nanoseconds: int) -> datetime:
    # fixed64 nanoseconds end in the year 2554: every value is a valid time.
    return datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC)


def _span_facts(span: Span, scope: str) -> SpanFacts:
    return SpanFacts(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_span_id=span.parent_span_id.hex(),
        name=span.name,
        scope=scope,
        started_at=_time(span.start_time_unix_nano),
        ended_at=_time(span.end_time_unix_nano),
        failed=span.status.code == SpanStatus.STATUS_CODE_ERROR,
        attributes={attribute.key: _value(attribute.value) for attribute in span.attributes},
    )


def spans_of(request: ExportTraceServiceRequest) -> list[SpanFacts]:
    return [
        _span_facts(span, scope_spans.scope.name)
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]
