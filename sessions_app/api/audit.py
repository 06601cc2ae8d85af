"""Audit endpoints under /api/v1/: receipts, waits, prompt contracts and conversation merges in; a run's audit out.

Writing audit records takes a `server` API key: a client (a browser) could otherwise forge the very receipt,
contract or merge that makes a history look fit to replay. Refused input answers through `api_key_required`.
"""

from django.http import JsonResponse
from django.views.decorators.http import require_GET, require_POST
from pydantic import BaseModel, ConfigDict

from sessions_app.api.auth import ApiRequest, api_key_required, key_actor
from sessions_app.api.body import json_body
from sessions_app.audit import evidence, service
from sessions_app.audit.inputs import AuditInputError
from sessions_app.core.api_input import Identifier, validate_model
from sessions_app.models import Source


class MergeInput(BaseModel):
    """POST /api/v1/merges: the messages of `merged_conversation_id` belong to `conversation_id`."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    conversation_id: Identifier
    merged_conversation_id: Identifier


@require_POST
@api_key_required(kind=Source.SERVER)
def post_receipt(request: ApiRequest) -> JsonResponse:
    receipt, report = evidence.add_receipt(request.tenant, json_body(request))
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
@api_key_required(kind=Source.SERVER)
def post_wait(request: ApiRequest) -> JsonResponse:
    wait, generated_token, report = evidence.add_wait(request.tenant, json_body(request))
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
@api_key_required(kind=Source.SERVER)
def post_wait_resolution(request: ApiRequest) -> JsonResponse:
    """Resolve a run's open wait by presenting its resume token; the run is re-audited."""
    wait, report = evidence.resolve_wait(request.tenant, json_body(request), actor=key_actor(request))
    return JsonResponse(
        {
            "wait_id": wait.id,
            "run_id": report.run_id,
            "resolved_at": wait.resolved_at.isoformat() if wait.resolved_at else None,
            "verdict": report.verdict,
        }
    )


@require_POST
@api_key_required(kind=Source.SERVER)
def post_prompt_contract(request: ApiRequest, name: str) -> JsonResponse:
    contract, reaudited = evidence.set_prompt_contract(request.tenant, name, json_body(request))
    return JsonResponse(
        {
            "agent": contract.agent_name,
            "kind": contract.kind,
            "value": contract.value,
            "runs_reaudited": reaudited,
        }
    )


@require_POST
@api_key_required(kind=Source.SERVER)
def post_merge(request: ApiRequest) -> JsonResponse:
    """Record an explicit merge (SPEC gate 5): the conversation's runs are re-audited with the merged id's
    messages counted as their own. Another tenant's conversation answers 404, as a missing one does."""
    merge_input = validate_model(MergeInput, json_body(request), "merge", AuditInputError)
    merge = evidence.record_merge(
        request.tenant,
        merge_input.conversation_id,
        merge_input.merged_conversation_id,
        actor=key_actor(request),
    )
    return JsonResponse(
        {
            "merge_id": merge.id,
            "conversation_id": merge_input.conversation_id,
            "merged_conversation_id": merge.merged_external_id,
        },
        status=201,
    )


@require_GET
@api_key_required
def get_run_audit(request: ApiRequest, run_id: str) -> JsonResponse:
    return JsonResponse(service.audit_report(service.get_run(request.tenant, run_id, request.api_key)).as_dict())
