"""Saved views (issue 26): save the list's current filter under a name (operators), open one (anyone who reads
the list: the list with that filter), delete one (admins). Another tenant's view answers 404."""

from django.contrib import messages
from django.http import HttpResponseBase, HttpResponseRedirect, QueryDict
from django.views.decorators.http import require_GET, require_POST

from input_errors import RejectedInput
from sessions_app.dashboard import saved_views
from sessions_app.dashboard.views.conversations import list_page
from sessions_app.models import SavedView
from sessions_app.models.saved_views import MAX_VIEW_QUERY
from sessions_app.tenancy.permissions import Action, MemberRequest, member_view
from sessions_app.tenancy.scoping import get_scoped_or_404


@require_GET
@member_view(Action.READ_CONVERSATIONS)
def open_view(request: MemberRequest, pk: int) -> HttpResponseBase:
    view = get_scoped_or_404(SavedView, request.tenant, pk=pk)
    return HttpResponseRedirect(saved_views.list_url(view))


@require_POST
@member_view(Action.SAVE_VIEWS)
def create_view(request: MemberRequest) -> HttpResponseBase:
    name, query = request.POST.get("name", ""), request.POST.get("query", "")
    try:
        view = saved_views.save_view(request.tenant, name, query, actor=request.user)
    except RejectedInput as refused:
        params = QueryDict(query.lstrip("?")[: MAX_VIEW_QUERY])
        return list_page(request, params, save_error=refused.message, save_name=name[:200])
    messages.success(request, f"View {view.name!r} saved; it is in the navigation.")
    return HttpResponseRedirect(saved_views.view_url(view))


@require_POST
@member_view(Action.DELETE_VIEWS)
def delete_view(request: MemberRequest, pk: int) -> HttpResponseBase:
    view = get_scoped_or_404(SavedView, request.tenant, pk=pk)
    saved_views.delete_view(request.tenant, view, actor=request.user)
    messages.success(request, f"View {view.name!r} deleted.")
    return HttpResponseRedirect("/conversations/")
