"""GET /api/v1/openapi.json: the OpenAPI 3.1 document of the JSON API, generated from the same pydantic models
that validate each request body (`sessions_app.ingest.payloads`, `sessions_app.audit.inputs`, `api.audit`) and the
search endpoints' query parameters (`api.search_params`), so the document cannot drift from what the server accepts.
It also describes OTLP's POST /v1/traces. Schemathesis runs against it in the suite."""

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from pydantic import BaseModel

from sessions_app.api.audit import MergeInput
from sessions_app.api.reads import (
    AuditEventParams,
    ConversationListParams,
    SnapshotDiffParams,
    SnapshotListParams,
    TranscriptParams,
)
from sessions_app.api.scores import ScoreInput
from sessions_app.api.search_params import ContextParams, SearchParams
from sessions_app.audit.inputs import ContractBody, ReceiptInput, WaitInput, WaitResolutionInput
from sessions_app.core.api_input import ID_PATTERN, MAX_ID_LENGTH, MAX_JSON_DEPTH, MAX_PRINCIPAL_LENGTH
from sessions_app.core.safe_json_schema import SAFE_JSON, SAFE_JSON_SCHEMA, with_safe_strings
from sessions_app.ingest.payloads import SnapshotIn, ToolEffectIn, message_definitions, messages_schema

type Json = dict[str, Any]

ERRORS = {
    "400": "Refused input; `error` names the field or problem",
    "401": "Missing, unknown or revoked API key",
    "403": "The key may not do this (client keys cannot write audit records; a token that matches no wait)",
    "404": "Not found in this key's tenant (the same answer as for another tenant's)",
    "409": "Conflict (a run id of another conversation; a history not READY for replay)",
    "411": "A chunked body (`Transfer-Encoding: chunked`): send it with a Content-Length",
    "413": "Body over SESSIONDESK_MAX_PAYLOAD_BYTES, or a snapshot over the message limit",
    "415": "Not `application/json` in UTF-8",
    "503": "The database is unavailable or busy; nothing was written, retry",
}
ID_PARAM = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH, "pattern": ID_PATTERN}
ERROR_REF = {"$ref": "#/components/schemas/Error"}
# What `middleware._url_problem` lets through (a query may hold tabs and line breaks, a path no control character).
QUERY_TEXT_PATTERN = "^[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]*(?![\\s\\S])"
_BLANK = " \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
# A principal in a query: a single line (a tab at most) with something besides spaces in it.
PRINCIPAL_QUERY_PATTERN = (
    f"^[^\\x00-\\x08\\n-\\x1f\\x7f]*[^\\x00-\\x1f\\x7f{_BLANK}][^\\x00-\\x08\\n-\\x1f\\x7f]*(?![\\s\\S])"
)
PRINCIPAL_PARAM = {
    "name": "principal",
    "in": "query",
    "schema": {"type": "string", "maxLength": MAX_PRINCIPAL_LENGTH, "pattern": PRINCIPAL_QUERY_PATTERN},
}


def _schema(model: type[BaseModel]) -> Json:
    return model.model_json_schema(ref_template="#/components/schemas/{model}", mode="validation")


def _responses(*success: str) -> Json:
    answers: Json = {
        code: {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}} for code in success
    }
    for code, description in ERRORS.items():
        answers.setdefault(code, {"description": description, "content": {"application/json": {"schema": ERROR_REF}}})
    return answers


def _path_params(*names: str) -> list[Json]:
    return [{"name": name, "in": "path", "required": True, "schema": ID_PARAM} for name in names]


def _post(model: type[BaseModel], summary: str, *success: str, path_params: tuple[str, ...] = ()) -> Json:
    return {
        "post": {
            "summary": summary,
            "parameters": _path_params(*path_params),
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}},
            },
            "responses": _responses(*success),
        }
    }


_JSON_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def query_parameters(model: type[BaseModel]) -> list[Json]:
    """One OpenAPI query parameter per field of `model`, its schema the field's own (an optional field's
    non-null branch), its description the field's."""
    schema = _schema(model)
    required = set(schema.get("required", ()))
    parameters = []
    for name, field_schema in schema["properties"].items():
        field_schema = {key: value for key, value in field_schema.items() if key != "title"}
        description = field_schema.pop("description", "")
        branches = [branch for branch in field_schema.pop("anyOf", ()) if branch != {"type": "null"}]
        if branches:  # `X | None`: a query parameter is given or absent, never null
            field_schema = {**branches[0], **field_schema}
        # pydantic leaves the bounds of an optional constrained number under their Python names: JSON Schema's here.
        field_schema = {_JSON_BOUNDS.get(key, key): value for key, value in field_schema.items()}
        if field_schema.get("default", 0) is None:
            del field_schema["default"]
        if field_schema.get("type") == "string" and not {"pattern", "enum", "format"} & set(field_schema):
            field_schema["pattern"] = QUERY_TEXT_PATTERN
        if "string" in str(field_schema.get("items", {}).get("type")) and "pattern" not in field_schema["items"]:
            field_schema["items"] = {**field_schema["items"], "pattern": QUERY_TEXT_PATTERN}
        parameter = {"name": name, "in": "query", "required": name in required, "schema": field_schema}
        parameters.append({**parameter, "description": description} if description else parameter)
    return parameters


def _get(summary: str, parameters: list[Json], *success: str, overrides: Json | None = None) -> Json:
    return {
        "get": {
            "summary": summary,
            "parameters": parameters,
            "responses": {**_responses(*success), **(overrides or {})},
        }
    }


SEARCH_ANSWER = {
    "description": "Ranked hits of one page, and the totals over every page",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": [
                    "results",
                    "indexing",
                    "total_matches",
                    "total_conversations",
                    "total_is_lower_bound",
                    "next_cursor",
                ],
                "properties": {
                    "identified": {"type": "array", "items": {"type": "object"}},
                    "results": {"type": "array", "items": {"type": "object"}},
                    "indexing": {
                        "type": "boolean",
                        "description": "True while anything of the scope is not yet folded into the index or is "
                        "being re-indexed: unfolded messages are found all the same; conversations being re-indexed "
                        "are left out until done.",
                    },
                    "reindexing": {
                        "type": "boolean",
                        "description": "True while a conversation of the scope is being re-indexed: it is left out "
                        "of the results until done.",
                    },
                    "truncated": {"type": "boolean"},
                    "total_matches": {"type": "integer", "minimum": 0},
                    "total_conversations": {"type": "integer", "minimum": 0},
                    "total_is_lower_bound": {
                        "type": "boolean",
                        "description": "True when more messages matched than are counted exactly (10,000): "
                        "`total_matches` and `total_conversations` are then lower bounds. Paging is exact either way.",
                    },
                    "offset": {"type": "integer", "minimum": 0},
                    "next_cursor": {"type": ["string", "null"]},
                },
            }
        }
    },
}


REPLAY_REFUSED = {
    "description": "The latest run is not READY: its verdict and findings, each with guidance",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["verdict", "conversation_id", "run_id", "findings"],
                "properties": {
                    "verdict": {"type": "string"},
                    "conversation_id": {"type": "string"},
                    "run_id": {"type": ["string", "null"]},
                    "findings": {"type": "array", "items": {"type": "object"}},
                },
            }
        }
    },
}

# OTLP/HTTP: protobuf or its JSON mapping, the answer in the request's encoding (a refusal as a google.rpc.Status).
PROTOBUF_BODY = {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}}}
OTLP_REQUEST = {
    "type": "object",
    "description": "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest, in OTLP/JSON",
    # proto3's JSON mapping takes null for any field as its default (no spans).
    "properties": {"resourceSpans": {"type": ["array", "null"], "items": {"type": "object"}}},
}
OTLP_RESPONSE = {
    "type": "object",
    "description": "ExportTraceServiceResponse; partialSuccess only when spans were not stored",
    "properties": {
        "partialSuccess": {
            "type": "object",
            "properties": {"rejectedSpans": {"type": "string"}, "errorMessage": {"type": "string"}},
        }
    },
}
RPC_STATUS = {
    "type": "object",
    "description": "google.rpc.Status",
    "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
}


def _otlp_answer(description: str, json_schema: Json) -> Json:
    return {"description": description, "content": {**PROTOBUF_BODY, "application/json": {"schema": json_schema}}}


def _traces() -> Json:
    refused = _otlp_answer("Refused: a google.rpc.Status in the request's encoding", RPC_STATUS)
    return {
        "post": {
            "summary": "OTLP/HTTP trace export (protobuf or JSON, gzip or not)",
            # `Content-Encoding: gzip` is read (every member), but a gzip body is more than JSON Schema can describe,
            # so the header is told here rather than declared as a parameter generated requests would set.
            "description": "The body may be sent with `Content-Encoding: gzip`; any other encoding is a 415.",
            "requestBody": {
                "required": True,
                "content": {**PROTOBUF_BODY, "application/json": {"schema": with_safe_strings(OTLP_REQUEST)}},
            },
            "responses": {
                "200": _otlp_answer("Stored; spans not stored are counted in partialSuccess", OTLP_RESPONSE),
                "400": refused,
                # Every refusal, the key check's and the edge's among them, is a Status (protobuf for a type that
                # is neither of OTLP's).
                **{code: _otlp_answer(ERRORS[code], RPC_STATUS) for code in ("401", "411", "413", "503")},
                "415": _otlp_answer("Not protobuf or JSON, or a Content-Encoding other than gzip", RPC_STATUS),
            },
        }
    }


MODELS: tuple[type[BaseModel], ...] = (
    SnapshotIn, ToolEffectIn, ReceiptInput, WaitInput, WaitResolutionInput, ContractBody, MergeInput, ScoreInput,
)  # fmt: skip
QUERY_MODELS: tuple[type[BaseModel], ...] = (
    SearchParams, ContextParams, ConversationListParams, AuditEventParams, TranscriptParams, SnapshotListParams,
    SnapshotDiffParams,
)  # fmt: skip


def body_schema(model: type[BaseModel]) -> Json:
    """The request body schema of `model` as the server validates it: the model's own, with a snapshot's
    `messages` as pydantic-ai's ModelMessage list (the model declares `list[object]` and validates them after)."""
    schema = _schema(model)
    if model is SnapshotIn:
        schema["properties"]["messages"] = messages_schema()
    return schema


def _body_components() -> Json:
    schemas: Json = message_definitions()
    for model in MODELS:
        schema = body_schema(model)
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    # Every string and key of a body holds no NUL (`api_input.find_unsafe_string`), undeclared fields too.
    return {name: with_safe_strings(schema) for name, schema in schemas.items()} | {SAFE_JSON: SAFE_JSON_SCHEMA}


def document() -> Json:
    schemas: Json = {"Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}}
    schemas.update(_body_components())
    for model in QUERY_MODELS:  # the enums their parameters refer to
        schemas.update(_schema(model).get("$defs", {}))
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Sessiondesk API",
            "version": "1",
            "description": (
                "Bearer API keys decide the tenant. Bodies are JSON in UTF-8 (415 otherwise), at most "
                f"SESSIONDESK_MAX_PAYLOAD_BYTES (413), nested at most {MAX_JSON_DEPTH} deep; strings never hold NUL "
                "or lone surrogates; ids are 1-200 characters without control characters (run ids and agent "
                "names without '/')."
            ),
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": {
            "/api/v1/snapshots": _post(SnapshotIn, "Store a step snapshot", "200", "201"),
            "/api/v1/tool-effects": _post(ToolEffectIn, "Record a tool-effect ledger entry", "200"),
            "/api/v1/receipts": _post(ReceiptInput, "Add an outcome receipt (server key)", "201"),
            "/api/v1/waits": _post(WaitInput, "Record a legitimate wait (server key)", "201"),
            "/api/v1/waits/resolve": _post(WaitResolutionInput, "Resolve a wait by its token", "200"),
            "/api/v1/merges": _post(MergeInput, "Record an explicit merge of two conversation ids (server key)", "201"),
            "/api/v1/agents/{name}/prompt-contract": _post(
                ContractBody, "Set an agent's prompt contract (server key)", "200", path_params=("name",)
            ),
            "/api/v1/scores": _post(ScoreInput, "Set a score on a conversation, run or message (server key)", "201"),
            "/api/v1/runs/{run_id}/audit": _get("A run's audit", _path_params("run_id"), "200"),
            "/api/v1/search": _get(
                "Ranked search (exact BM25)", query_parameters(SearchParams), "200", overrides={"200": SEARCH_ANSWER}
            ),
            "/api/v1/conversations/{conversation_id}/messages": _get(
                "A position in its context",
                _path_params("conversation_id") + query_parameters(ContextParams),
                "200",
            ),
            "/api/v1/conversations/{conversation_id}/replay": _get(
                "The history to resume from, when READY",
                [*_path_params("conversation_id"), PRINCIPAL_PARAM],
                "200",
                overrides={"409": REPLAY_REFUSED},
            ),
            "/api/v1/conversations": _get(
                "Conversations with their triage columns (cursor-paged)",
                query_parameters(ConversationListParams),
                "200",
            ),
            "/api/v1/conversations/{conversation_id}": _get(
                "A conversation with its runs", _path_params("conversation_id"), "200"
            ),
            "/api/v1/conversations/{conversation_id}/transcript": _get(
                "The recovered transcript as the export's rows, paged (server key)",
                _path_params("conversation_id") + query_parameters(TranscriptParams),
                "200",
            ),
            "/api/v1/audit-events": _get(
                "The audit log, newest first (server key)", query_parameters(AuditEventParams), "200"
            ),
            "/api/v1/runs/{run_id}": _get(
                "A run with its snapshots and tool-effect ledger", _path_params("run_id"), "200"
            ),
            "/api/v1/runs/{run_id}/snapshots": _get(
                "A run's snapshots in write order (cursor-paged)",
                _path_params("run_id") + query_parameters(SnapshotListParams),
                "200",
            ),
            "/api/v1/runs/{run_id}/snapshots/diff": _get(
                "What changed between two snapshots of a run (masked text)",
                _path_params("run_id") + query_parameters(SnapshotDiffParams),
                "200",
            ),
            "/v1/traces": _traces(),
        },
        "components": {"schemas": schemas, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


@require_GET
def openapi_json(request: HttpRequest) -> JsonResponse:
    return JsonResponse(document())


@require_GET
def reference(request: HttpRequest) -> HttpResponse:
    """The document rendered by Swagger UI, from the product's own static files (no CDN)."""
    return render(request, "api/reference.html")
