"""The web dashboard's URLs (the JSON API is under /api/v1/ in api_urls)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from sessions_app.dashboard.views import (
    admin,
    audit,
    auth,
    conversations,
    export,
    health,
    operations,
    receipts,
    search,
    snapshots,
)

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("login", auth.login, name="login"),
    path("logout", auth_views.LogoutView.as_view(), name="logout"),
    path("password/change", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("password/change/done", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("", auth.home, name="home"),
    path("tenant/switch", auth.switch, name="switch-tenant"),
    path("conversations/", conversations.conversation_list_page, name="conversations"),
    path("conversations/<int:pk>/", conversations.conversation_page, name="conversation"),
    path(
        "conversations/<int:pk>/reveal/<int:position>",
        conversations.reveal_message,
        name="reveal-message",
    ),
    path("conversations/<int:pk>/export", export.export_one, name="export-conversation"),
    path("conversations/<int:pk>/reaudit", operations.reaudit, name="reaudit-conversation"),
    path("conversations/<int:pk>/reindex", operations.reindex, name="reindex-conversation"),
    path("runs/<int:pk>/snapshots/", snapshots.snapshot_list, name="snapshots"),
    path("runs/<int:pk>/snapshots/<int:seq>/diff", snapshots.snapshot_diff, name="snapshot-diff"),
    path("runs/<int:pk>/receipts/", receipts.receipts_and_waits, name="receipts"),
    path("runs/<int:pk>/receipts/add", receipts.add_receipt, name="add-receipt"),
    path("runs/<int:pk>/waits/add", receipts.add_wait, name="add-wait"),
    path("runs/<int:pk>/waits/resolve", receipts.resolve_wait, name="resolve-wait"),
    path("runs/<int:pk>/audit", audit.run_audit, name="run-audit"),
    path("search/", search.search_page, name="search"),
    path("repairs/", audit.repairs, name="repairs"),
    path("audit/", audit.audit_events, name="audit-events"),
    path("audit.csv", audit.audit_events_csv, name="audit-events-csv"),
    path("export/", export.export_page, name="export"),
    path("export/download", export.export_many, name="export-download"),
    path("settings/members/", admin.members, name="members"),
    path("settings/members/<int:pk>/role", admin.change_role, name="member-role"),
    path("settings/members/<int:pk>/remove", admin.remove_member, name="member-remove"),
    path("settings/api-keys/", admin.api_keys, name="api-keys"),
    path("settings/api-keys/<int:pk>/revoke", admin.revoke_key, name="api-key-revoke"),
    path("settings/redaction/", admin.redaction, name="redaction"),
    path("settings/retention/", admin.retention, name="retention"),
]
