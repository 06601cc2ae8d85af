"""Saved views (issue 26): a tenant's named conversation-list filters, shown in the navigation.

A view keeps the list's query string as the list would read it (`normalized_query`: the form's own parameters, in
the form's order, blanks and the page cursor left out), checked by the list's own selection when it is saved, so
a view the list would refuse is never stored. Saving and deleting a view is audited (who, the view by id), in the
transaction of the change."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.http import HttpRequest, QueryDict

from input_errors import RejectedInput
from sessions_app.audit.events import record_event
from sessions_app.audit.vocabulary import EventClass
from sessions_app.dashboard.filter_urls import select
from sessions_app.dashboard.forms import ConversationFilterForm
from sessions_app.models import SavedView, Tenant
from sessions_app.models.saved_views import MAX_VIEW_NAME, MAX_VIEW_QUERY
from sessions_app.tenancy.scoping import scoped

MAX_VIEWS = 50
NOT_SAVED = ("cursor",)  # a page position is not part of a filter


def normalized_query(params: QueryDict) -> str:
    """The list parameters of `params` (a query string's), in the form's field order, without blanks or cursor."""
    kept = QueryDict(mutable=True)
    for name in ConversationFilterForm().fields:
        values = [value.strip() for value in params.getlist(name) if value.strip()]
        if values and name not in NOT_SAVED:
            kept.setlist(name, values)
    return kept.urlencode()


def save_view(tenant: Tenant, name: str, query: str, *, actor: User) -> SavedView:
    """A new view named `name` of the list filter `query`; RejectedInput (nothing stored) for an empty, too long
    or taken name, or a filter the list refuses."""
    name = " ".join(name.split())
    if not name:
        raise RejectedInput("Give the view a name.")
    if len(name) > MAX_VIEW_NAME:
        raise RejectedInput(f"A view name is at most {MAX_VIEW_NAME} characters.")
    if len(query) > MAX_VIEW_QUERY:
        raise RejectedInput(f"The filter is at most {MAX_VIEW_QUERY:,} characters.")
    normalized = normalized_query(QueryDict(query.lstrip("?")))
    select(tenant, QueryDict(normalized))  # refused here exactly as the list would refuse it
    views = scoped(SavedView, tenant)
    if views.filter(name__iexact=name).exists():
        raise RejectedInput(f"A view named {name!r} already exists; choose another name.", status=409)
    if views.count() >= MAX_VIEWS:
        raise RejectedInput(f"A tenant keeps at most {MAX_VIEWS} views; an admin can delete one.", status=409)
    try:
        with transaction.atomic():
            view = SavedView.objects.create(tenant=tenant, name=name, query=normalized, created_by=actor)
            record_event(tenant, EventClass.VIEW_SAVED, actor=actor.get_username(), subject=audit_subject(view))
            return view
    except IntegrityError:  # saved by someone else a moment ago
        raise RejectedInput(f"A view named {name!r} already exists; choose another name.", status=409) from None


def delete_view(tenant: Tenant, view: SavedView, *, actor: User) -> None:
    """Delete the tenant's `view`, audited; a view deleted a moment ago by someone else is deleted once."""
    with transaction.atomic():
        deleted, _ = scoped(SavedView, tenant).filter(pk=view.pk).delete()
        if deleted:
            record_event(tenant, EventClass.VIEW_DELETED, actor=actor.get_username(), subject=audit_subject(view))


def audit_subject(view: SavedView) -> str:
    """How the audit log names a view: by id, not by its name (a name a tenant typed is not the log's to keep)."""
    return f"saved_view:{view.pk}"


def views_of(tenant: Tenant) -> list[SavedView]:
    return list(scoped(SavedView, tenant).order_by("name", "pk"))


def view_named(tenant: Tenant, name: str) -> SavedView:
    """The tenant's view of this name (another tenant's answers as a missing one: 404)."""
    view = scoped(SavedView, tenant).filter(name=name).first()
    if view is None:
        raise RejectedInput(f"No saved view named {name[:80]!r}.", status=404)
    return view


def view_url(view: SavedView) -> str:
    return f"/views/{view.pk}/"


def list_url(view: SavedView) -> str:
    return f"/conversations/?{view.query}" if view.query else "/conversations/"


@dataclass(frozen=True)
class NavView:
    name: str
    url: str
    current: bool  # the list shown is this view's filter


def nav_views(tenant: Tenant, request: HttpRequest) -> list[NavView]:
    """The tenant's views as the navigation shows them, the one whose filter the list now shows marked."""
    on_list = request.path == "/conversations/"
    shown = normalized_query(request.GET) if on_list else None
    return [NavView(view.name, view_url(view), shown == view.query) for view in views_of(tenant)]
