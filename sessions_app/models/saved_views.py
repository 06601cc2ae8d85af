"""A tenant's saved views (issue 26): a named conversation-list filter, shown in every member's navigation.

The filter is kept as the list's own query string (`/conversations/?<query>`), checked by the list's form when it
is saved, so opening a view is the list with that filter and a filter is a URL either way."""

from django.conf import settings
from django.db import models

from sessions_app.models.store import Tenant

MAX_VIEW_NAME = 80
MAX_VIEW_QUERY = 2000


class SavedView(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=MAX_VIEW_NAME)
    query = models.CharField(max_length=MAX_VIEW_QUERY, blank=True, help_text="The list's query string, no '?'.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="savedview_unique_name")]

    def __str__(self) -> str:
        return self.name
