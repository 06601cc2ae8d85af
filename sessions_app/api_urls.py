"""The JSON API under /api/v1/, authenticated by tenant API keys."""

from django.urls import path

from sessions_app import api

urlpatterns = [
    path("snapshots", api.post_snapshot, name="api-snapshots"),
    path("tool-effects", api.post_tool_effect, name="api-tool-effects"),
]
