"""The JSON API under /api/v1/, authenticated by tenant API keys."""

from django.urls import path

from sessions_app.api import audit, conversations, openapi, replay, scores, search, snapshots

urlpatterns = [
    path("openapi.json", openapi.openapi_json, name="api-openapi"),
    path("docs", openapi.reference, name="api-reference"),
    path("search", search.search, name="api-search"),
    path(
        "conversations/<path:conversation_id>/messages", search.conversation_messages, name="api-conversation-messages"
    ),
    path("snapshots", snapshots.post_snapshot, name="api-snapshots"),
    path("tool-effects", snapshots.post_tool_effect, name="api-tool-effects"),
    path("receipts", audit.post_receipt, name="api-receipts"),
    path("waits", audit.post_wait, name="api-waits"),
    path("waits/resolve", audit.post_wait_resolution, name="api-wait-resolve"),
    path("merges", audit.post_merge, name="api-merges"),
    path("agents/<str:name>/prompt-contract", audit.post_prompt_contract, name="api-prompt-contract"),
    path("runs/<str:run_id>/audit", audit.get_run_audit, name="api-run-audit"),
    path("runs/<str:run_id>/snapshots/diff", conversations.snapshot_diff, name="api-snapshot-diff"),
    path("runs/<str:run_id>/snapshots", conversations.run_snapshots, name="api-run-snapshots"),
    path("runs/<str:run_id>", conversations.get_run, name="api-run"),
    path("conversations/<path:conversation_id>/replay", replay.get_replay, name="api-replay"),
    path("scores", scores.post_score, name="api-scores"),
    path(
        "conversations/<path:conversation_id>/transcript", conversations.transcript, name="api-conversation-transcript"
    ),
    path("conversations", conversations.list_conversations, name="api-conversations"),
    path("audit-events", conversations.audit_events, name="api-audit-events"),
    # Last: a conversation id may hold slashes, so this would also match the longer paths above.
    path("conversations/<path:conversation_id>", conversations.get_conversation, name="api-conversation"),
]
