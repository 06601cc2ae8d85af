"""Search endpoints under /api/v1/ (API-key authenticated)."""

from django.urls import path

from search_app import api

urlpatterns = [
    path("search", api.search, name="api-search"),
    path("conversations/<path:conversation_id>/messages", api.conversation_messages, name="api-conversation-messages"),
]
