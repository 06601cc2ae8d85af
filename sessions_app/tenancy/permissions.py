"""Who may do what, in which tenant: the one module every dashboard view goes through.

Roles rank support < operator < admin per tenant membership (SPEC section 4). The current tenant is kept in
the session and can be switched among the user's memberships. Objects are fetched through the
`get_<thing>_for_member` family on top of `sessions_app.tenancy.scoping`, so another tenant's object answers 404
exactly like one that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import wraps
from typing import TYPE_CHECKING, Concatenate, ParamSpec, cast

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django_htmx.http import HttpResponseClientRedirect

from sessions_app.models import ApiKey, Conversation, Membership, Role, Run, Tenant
from sessions_app.tenancy.scoping import get_scoped_or_404

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_htmx.middleware import HtmxDetails

SESSION_TENANT_KEY = "sessiondesk_tenant_id"

ROLE_RANK: dict[str, int] = {Role.SUPPORT: 1, Role.OPERATOR: 2, Role.ADMIN: 3}


class Action(StrEnum):
    """Everything the dashboard lets a member do; each maps to the lowest role allowed to do it."""

    READ_CONVERSATIONS = "read_conversations"
    SEARCH = "search"
    VIEW_AUDIT = "view_audit"
    VIEW_REPAIRS = "view_repairs"
    VIEW_SNAPSHOTS = "view_snapshots"
    VIEW_RECEIPTS = "view_receipts"
    ADD_RECEIPTS = "add_receipts"
    REAUDIT = "reaudit"
    REINDEX = "reindex"
    EXPORT = "export"
    REVEAL_CREDENTIALS = "reveal_credentials"
    MANAGE_MEMBERS = "manage_members"
    MANAGE_API_KEYS = "manage_api_keys"
    MANAGE_REDACTION = "manage_redaction"
    MANAGE_RETENTION = "manage_retention"
    # Negotiated model prices and when a quiet run is STUCK (issue 26).
    MANAGE_COSTS = "manage_costs"
    # Review (issue 27): marks people leave on conversations.
    SCORE_AND_COMMENT = "score_and_comment"
    REVIEW_QUEUE_ITEMS = "review_queue_items"
    MANAGE_QUEUES = "manage_queues"
    MANAGE_SCORE_NAMES = "manage_score_names"
    MANAGE_SHARE_LINKS = "manage_share_links"
    # Saved views (issue 26): a named list filter in every member's navigation.
    SAVE_VIEWS = "save_views"
    DELETE_VIEWS = "delete_views"


MINIMUM_ROLE: dict[Action, str] = {
    Action.READ_CONVERSATIONS: Role.SUPPORT,
    Action.SEARCH: Role.SUPPORT,
    Action.VIEW_AUDIT: Role.OPERATOR,
    Action.VIEW_REPAIRS: Role.OPERATOR,
    Action.VIEW_SNAPSHOTS: Role.OPERATOR,
    Action.VIEW_RECEIPTS: Role.OPERATOR,
    Action.ADD_RECEIPTS: Role.OPERATOR,
    Action.REAUDIT: Role.OPERATOR,
    Action.REINDEX: Role.OPERATOR,
    Action.EXPORT: Role.ADMIN,
    Action.REVEAL_CREDENTIALS: Role.ADMIN,
    Action.MANAGE_MEMBERS: Role.ADMIN,
    Action.MANAGE_API_KEYS: Role.ADMIN,
    Action.MANAGE_REDACTION: Role.ADMIN,
    Action.MANAGE_RETENTION: Role.ADMIN,
    Action.MANAGE_COSTS: Role.ADMIN,
    Action.SCORE_AND_COMMENT: Role.SUPPORT,
    Action.REVIEW_QUEUE_ITEMS: Role.SUPPORT,
    Action.MANAGE_QUEUES: Role.OPERATOR,
    Action.MANAGE_SCORE_NAMES: Role.ADMIN,
    # A share link lets a conversation leave the tenant, as an export does: admins only, and only once enabled.
    Action.MANAGE_SHARE_LINKS: Role.ADMIN,
    # A view shows in everyone's navigation, so saving one is an operator's (as filling a queue is); removing
    # one that others may rely on is an admin's.
    Action.SAVE_VIEWS: Role.OPERATOR,
    Action.DELETE_VIEWS: Role.ADMIN,
}


def role_allows(role: str, action: Action) -> bool:
    """Whether `role` may perform `action` (unknown roles may do nothing)."""
    return ROLE_RANK.get(role, 0) >= ROLE_RANK[MINIMUM_ROLE[action]]


class Grants:
    """What the current member may do, readable in templates as `request.grants.export`."""

    def __init__(self, role: str) -> None:
        self.role = role
        for action in Action:
            setattr(self, action.value, role_allows(role, action))

    def __contains__(self, action: Action) -> bool:
        return role_allows(self.role, action)


class MemberRequest(HttpRequest):
    """A request that passed `member_view`: a logged-in member of `tenant` (declared for type checkers)."""

    user: User
    tenant: Tenant
    membership: Membership
    memberships: list[Membership]
    grants: Grants
    htmx: HtmxDetails


def choose_membership(memberships: list[Membership], wanted_tenant_id: int | None) -> Membership | None:
    """The membership for the tenant kept in the session, else the first one (the list is ordered by tenant name)."""
    for membership in memberships:
        if membership.tenant_id == wanted_tenant_id:
            return membership
    return memberships[0] if memberships else None


def memberships_of(user: User) -> list[Membership]:
    return list(Membership.objects.filter(user=user).select_related("tenant").order_by("tenant__name", "tenant_id"))


def switch_tenant(request: HttpRequest, tenant_slug: str) -> Membership | None:
    """Make `tenant_slug` the current tenant if the user belongs to it; None (nothing changes) otherwise."""
    user = request.user
    if not user.is_authenticated:
        return None  # an anonymous user belongs to no tenant
    membership = Membership.objects.filter(user=user, tenant__slug=tenant_slug).select_related("tenant").first()
    if membership is not None:
        request.session[SESSION_TENANT_KEY] = membership.tenant_id
    return membership


class InAnotherOfYourTenants(Http404):
    """Not in the current tenant, but in other tenants of the same person: the page offers a switch."""

    def __init__(self, tenants: list[Tenant]) -> None:
        super().__init__("Not in this tenant.")
        self.tenants = tenants


def _not_found(request: HttpRequest, error: Http404) -> HttpResponse:
    """The site's 404 page (never Django's debug page), offering a switch when the person can see it elsewhere."""
    offer = error.tenants if isinstance(error, InAnotherOfYourTenants) else []
    return render(request, "404.html", {"switch_to": offer}, status=404)


P = ParamSpec("P")
MemberView = Callable[Concatenate[MemberRequest, P], HttpResponseBase]


def _login_redirect(request: HttpRequest) -> HttpResponse:
    htmx: HtmxDetails | None = getattr(request, "htmx", None)
    if htmx:
        # An expired session during an HTMX swap: send the whole page to the login form, not a fragment.
        return HttpResponseClientRedirect(f"/login?next={htmx.current_url_abs_path or '/'}")
    return redirect_to_login(request.get_full_path())


def member_view(
    action: Action,
) -> Callable[[MemberView[P]], Callable[Concatenate[HttpRequest, P], HttpResponseBase]]:
    """Decorate a view that needs a logged-in member allowed to do `action` in the current tenant.

    Sets request.tenant, request.membership, request.memberships and request.grants. A user who belongs to no
    tenant, or whose role is too low, gets 403; objects are then fetched with `get_<thing>_for_member`.
    """

    def decorate(view: MemberView[P]) -> Callable[Concatenate[HttpRequest, P], HttpResponseBase]:
        # `request` is positional-only, as Concatenate declares it (Django passes it positionally).
        @wraps(view)
        def wrapped(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
            if not request.user.is_authenticated:
                return _login_redirect(request)
            memberships = memberships_of(request.user)
            membership = choose_membership(memberships, request.session.get(SESSION_TENANT_KEY))
            if membership is None:
                raise PermissionDenied("You are not a member of any tenant yet; ask a tenant admin to add you.")
            if request.session.get(SESSION_TENANT_KEY) != membership.tenant_id:
                request.session[SESSION_TENANT_KEY] = membership.tenant_id
            # The same object, from here on known to carry what MemberRequest declares.
            member = cast(MemberRequest, request)
            member.tenant = membership.tenant
            member.membership = membership
            member.memberships = memberships
            member.grants = Grants(membership.role)
            if not role_allows(membership.role, action):
                raise PermissionDenied(f"Your role ({membership.role}) does not allow this page.")
            try:
                return view(member, *args, **kwargs)
            except Http404 as error:
                return _not_found(request, error)

        # The URL matrix test reads this marker to check each view's row against its minimum role.
        wrapped.required_action = action  # type: ignore[attr-defined]  # an attribute on the function object
        return wrapped

    return decorate


def _other_tenants_holding(
    request: MemberRequest, model: type[Conversation] | type[Run], **lookup: str
) -> list[Tenant]:
    """Which of the person's other tenants hold such an object (only tenants they belong to are looked in)."""
    others = {m.tenant_id: m.tenant for m in request.memberships if m.tenant_id != request.tenant.pk}
    if not others:
        return []
    found = model.objects.filter(tenant_id__in=list(others), **lookup).values_list("tenant_id", flat=True)
    return [others[pk] for pk in sorted(set(found), key=lambda pk: others[pk].name)]


def _get_for_member[M: (Conversation, Run)](request: MemberRequest, model: type[M], **lookup: str) -> M:
    """The current tenant's row, else 404 (an `InAnotherOfYourTenants` when another of the person's tenants has it)."""
    try:
        return get_scoped_or_404(model, request.tenant, **lookup)
    except Http404:
        if elsewhere := _other_tenants_holding(request, model, **lookup):
            raise InAnotherOfYourTenants(elsewhere) from None
        raise


def get_conversation_for_member(request: MemberRequest, conversation_id: str) -> Conversation:
    """The current tenant's conversation with this id (the agent's own `conversation_id`), else 404 (offering a
    switch when another of the person's tenants has it)."""
    return _get_for_member(request, Conversation, external_id=conversation_id)


def get_run_for_member(request: MemberRequest, run_id: str) -> Run:
    """The current tenant's run with this id (the harness run id), else 404 (offering a switch as above)."""
    return _get_for_member(request, Run, run_id=run_id)


def get_membership_for_member(request: MemberRequest, pk: int) -> Membership:
    return get_scoped_or_404(Membership, request.tenant, pk=pk)


def get_api_key_for_member(request: MemberRequest, pk: int) -> ApiKey:
    return get_scoped_or_404(ApiKey, request.tenant, pk=pk)
