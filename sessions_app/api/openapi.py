"""GET /api/v1/openapi.json: the OpenAPI 3.1 document of the JSON API, generated from the same pydantic models
that validate each request body (`sessions_app.ingest.payloads`, `sessions_app.audit.inputs`), so the document
cannot drift from what the server accepts. Schemathesis runs against it in the suite."""

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET
from pydantic import BaseModel

from sessions_app.audit.inputs import ContractBody, ReceiptInput, WaitInput, WaitResolutionInput
from sessions_app.core.api_input import MAX_ID_LENGTH, MAX_JSON_DEPTH
from sessions_app.ingest.payloads import SnapshotIn, ToolEffectIn

ERRORS = {
    "400": "Refused input; `error` names the field or problem",
    "401": "Missing, unknown or revoked API key",
    "403": "The key may not do this (client keys cannot write audit records; a token that matches no wait)",
    "404": "Not found in this key's tenant (the same answer as for another tenant's)",
    "409": "Conflict (a run id of another conversation; a history not READY for replay)",
    "413": "Body over SESSIONDESK_MAX_PAYLOAD_BYTES, or a snapshot over the message limit",
    "415": "Not `application/json` in UTF-8",
    "503": "The database is unavailable or busy; nothing was written, retry",
}
ID_PARAM = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH}


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(ref_template="#/components/schemas/{model}", mode="validation")


def _responses(*success: str) -> dict[str, Any]:
    answers: dict[str, Any] = {
        code: {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}} for code in success
    }
    for code, description in ERRORS.items():
        answers.setdefault(
            code,
            {
                "description": description,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        )
    return answers


def _post(model: type[BaseModel], summary: str, *success: str, path_params: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "parameters": [{"name": n, "in": "path", "required": True, "schema": ID_PARAM} for n in path_params],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}},
            },
            "responses": _responses(*success),
        }
    }


def _query(name: str, schema: dict[str, Any], *, required: bool = False, description: str = "") -> dict[str, Any]:
    parameter = {"name": name, "in": "query", "required": required, "schema": schema}
    return {**parameter, "description": description} if description else parameter


SEARCH_SYNTAX = (
    'Words (any; rarer words weigh more), "a phrase", -word or -"phrase" to exclude, prefix* (two characters or '
    "more). Filters narrow without scoring: conversation:ID, run:ID, agent:NAME, tool:NAME (exact tool name), "
    "role:ROLE (repeatable: any of them); quote a value with spaces (agent:\"release bot\"); a filter that "
    "disagrees with conversation_id, run_id, agent or role is a 400. A query that is exactly a conversation, run or "
    "tool-call id also answers it in `identified`, before `results`. Masked values (credentials, the tenant's "
    "redaction patterns) are never matched."
)
SEARCH_PAGING = (
    "The `next_cursor` of the previous page of the same search (same q, scope and filters). The answer counts every "
    "match (`total_matches` messages in `total_conversations` conversations) and the pages walk one ranking, score "
    "then id, as the index stood at the first page. A changed cursor, or one of another search, is a 400."
)


def _get(
    summary: str, parameters: list[dict[str, Any]], *success: str, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "parameters": parameters,
            "responses": {**_responses(*success), **(overrides or {})},
        }
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


INT = {"type": "integer", "minimum": -(2**31 - 1), "maximum": 2**31 - 1}
MODELS: tuple[type[BaseModel], ...] = (
    SnapshotIn, ToolEffectIn, ReceiptInput, WaitInput, WaitResolutionInput, ContractBody,
)  # fmt: skip


def document() -> dict[str, Any]:
    conversation = {"name": "conversation_id", "in": "path", "required": True, "schema": ID_PARAM}
    schemas: dict[str, Any] = {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
    }
    for model in MODELS:
        schema = _schema(model)
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
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
            "/api/v1/agents/{name}/prompt-contract": _post(
                ContractBody, "Set an agent's prompt contract (server key)", "200", path_params=("name",)
            ),
            "/api/v1/runs/{run_id}/audit": _get(
                "A run's audit", [{"name": "run_id", "in": "path", "required": True, "schema": ID_PARAM}], "200"
            ),
            "/api/v1/search": _get(
                "Ranked search (exact BM25)",
                [
                    _query("q", {"type": "string", "maxLength": 1000}, description=SEARCH_SYNTAX),
                    _query("scope", {"type": "string", "enum": ["conversation", "run", "tenant"]}),
                    _query("conversation_id", ID_PARAM),
                    _query("run_id", ID_PARAM),
                    _query("agent", ID_PARAM),
                    _query("role", {"type": "string", "maxLength": 200}),
                    _query("since", {"type": "string", "format": "date-time"}),
                    _query("until", {"type": "string", "format": "date-time"}),
                    _query("limit", INT),
                    _query("cursor", {"type": "string", "maxLength": 512}, description=SEARCH_PAGING),
                ],
                "200",
            ),
            "/api/v1/conversations/{conversation_id}/messages": _get(
                "A position in its context",
                [
                    conversation,
                    _query("around", INT, required=True),
                    _query("before", INT),
                    _query("after", INT),
                    _query("run_id", ID_PARAM),
                ],
                "200",
            ),
            "/api/v1/conversations/{conversation_id}/replay": _get(
                "The history to resume from, when READY",
                [conversation, _query("principal", {"type": "string", "maxLength": 500})],
                "200",
                overrides={"409": REPLAY_REFUSED},
            ),
        },
        "components": {"schemas": schemas, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


@require_GET
def openapi_json(request: HttpRequest) -> JsonResponse:
    return JsonResponse(document())
