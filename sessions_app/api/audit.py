"""Audit endpoints under /api/v1/: receipts, waits, prompt contracts in; a run's audit out.

Writing audit records takes a `server` API key: a client (a browser) could otherwise forge the very receipt
or contract that makes a history look fit to replay.
"""

from django.http import JsonResponse
from django.views.decorators.http import require_GET, require_POST

from sessions_app.api.auth import ApiRequest, api_error, api_key_required
from sessions_app.api.body import json_body
from sessions_app.audit import service
from sessions_app.audit.inputs import AuditInputError
from sessions_app.models import Source

SERVER_KEY_REQUIRED = "This endpoint needs a server API key; client keys cannot write audit records."


def _is_server(request: ApiRequest) -> bool:
    return request.api_key.kind == Source.SERVER


@require_POST
@api_key_required
def post_receipt(request: ApiRequest) -> JsonResponse:
    if not _is_server(request):
        return api_error(403, SERVER_KEY_REQUIRED)
    try:
        receipt, report = service.add_receipt(request.tenant, json_body(request))
    except AuditInputError as error:
        return api_error(error.status, error.message)
    return JsonResponse(
        {
            "receipt_id": receipt.id,
            "run_id": report.run_id,
            "effect": receipt.effect,
            "evidence": receipt.evidence,
            "verdict": report.verdict,
        },
        status=201,
    )


@require_POST
@api_key_required
def post_wait(request: ApiRequest) -> JsonResponse:
    if not _is_server(request):
        return api_error(403, SERVER_KEY_REQUIRED)
    try:
        wait, generated_token, report = service.add_wait(request.tenant, json_body(request))
    except AuditInputError as error:
        return api_error(error.status, error.message)
    body = {
        "wait_id": wait.id,
        "run_id": report.run_id,
        "deadline": wait.deadline.isoformat(),
        "verdict": report.verdict,
    }
    if generated_token:
        # Shown once: only its hash is stored.
        body["resume_token"] = generated_token
    return JsonResponse(body, status=201)


@require_POST
@api_key_required
def post_wait_resolution(request: ApiRequest) -> JsonResponse:
    """Resolve a run's open wait by presenting its resume token; the run is re-audited."""
    if not _is_server(request):
        return api_error(403, SERVER_KEY_REQUIRED)
    try:
        wait, report = service.resolve_wait(
            request.tenant, json_body(request), actor=f"api-key:{request.api_key.prefix}"
        )
    except AuditInputError as error:
        return api_error(error.status, error.message)
    return JsonResponse(
        {
            "wait_id": wait.id,
            "run_id": report.run_id,
            "resolved_at": wait.resolved_at.isoformat() if wait.resolved_at else None,
            "verdict": report.verdict,
        }
    )


@require_POST
@api_key_required
def post_prompt_contract(request: ApiRequest, name: str) -> JsonResponse:
    if not _is_server(request):
        return api_error(403, SERVER_KEY_REQUIRED)
    try:
        contract, reaudited = service.set_prompt_contract(request.tenant, name, json_body(request))
    except AuditInputError as error:
        return api_error(error.status, error.message)
    return JsonResponse(
        {
            "agent": contract.agent_name,
            "kind": contract.kind,
            "value": contract.value,
            "runs_reaudited": reaudited,
        }
    )


@require_GET
@api_key_required
def get_run_audit(request: ApiRequest, run_id: str) -> JsonResponse:
    try:
        run = service.get_run(request.tenant, run_id)
    except AuditInputError as error:
        return api_error(error.status, error.message)
    return JsonResponse(service.audit_report(run).as_dict())
