"""The web dashboard's URLs (the JSON API is under /api/v1/ in api_urls)."""

from django.contrib.auth import views as auth_views
from django.urls import path, re_path

from sessions_app.dashboard.views import (
    admin,
    audit,
    auth,
    conversations,
    export,
    health,
    ids,
    operations,
    overview,
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
    path("invite/<uidb64>/<token>/", auth.accept_invite, name="accept-invite"),
    path("", auth.home, name="home"),
    path("tenant/switch", auth.switch, name="switch-tenant"),
    path("conversations/", conversations.conversation_list_page, name="conversations"),
    # Conversations and runs are addressed by their own ids (quoted; `path` lets an id hold slashes). Page URLs
    # end with "/" and action URLs do not, so a greedy id never swallows an action. Old numeric URLs redirect.
    path("c/<path:conversation_id>/", conversations.conversation_page, name="conversation"),
    path("c/<path:conversation_id>/reveal/<int:position>", conversations.reveal_message, name="reveal-message"),
    path("c/<path:conversation_id>/timeline", conversations.conversation_timeline, name="conversation-timeline"),
    path("c/<path:conversation_id>/export", export.export_one, name="export-conversation"),
    path("c/<path:conversation_id>/reaudit", operations.reaudit, name="reaudit-conversation"),
    path("c/<path:conversation_id>/reindex", operations.reindex, name="reindex-conversation"),
    path("r/<path:run_id>/snapshots/<int:seq>/diff", snapshots.snapshot_diff, name="snapshot-diff"),
    path("r/<path:run_id>/snapshots/", snapshots.snapshot_list, name="snapshots"),
    path("r/<path:run_id>/receipts/add", receipts.add_receipt, name="add-receipt"),
    path("r/<path:run_id>/receipts/", receipts.receipts_and_waits, name="receipts"),
    path("r/<path:run_id>/waits/add", receipts.add_wait, name="add-wait"),
    path("r/<path:run_id>/waits/resolve", receipts.resolve_wait, name="resolve-wait"),
    path("r/<path:run_id>/audit", audit.run_audit, name="run-audit"),
    path("r/<path:run_id>/", conversations.run_page, name="run"),
    re_path(r"^conversations/(?P<pk>[0-9]+)/(?P<rest>.*)$", ids.legacy_conversation_url),
    re_path(r"^runs/(?P<pk>[0-9]+)/(?P<rest>.*)$", ids.legacy_run_url),
    path("overview/", overview.overview_page, name="overview"),
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
