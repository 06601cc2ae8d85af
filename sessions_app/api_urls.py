"""The JSON API under /api/v1/, authenticated by tenant API keys."""

from django.urls import path

from sessions_app import api
from sessions_app.audit import api as audit_api

urlpatterns = [
    path("snapshots", api.post_snapshot, name="api-snapshots"),
    path("tool-effects", api.post_tool_effect, name="api-tool-effects"),
    # Replay audit (sessions_app/audit/api.py)
    path("receipts", audit_api.post_receipt, name="api-receipts"),
    path("waits", audit_api.post_wait, name="api-waits"),
    path("agents/<str:name>/prompt-contract", audit_api.post_prompt_contract, name="api-prompt-contract"),
    path("runs/<str:run_id>/audit", audit_api.get_run_audit, name="api-run-audit"),
]
