"""Every URL pattern is in one matrix, so a new view cannot go untested for roles and tenants.

The resolver (config/urls.py with every nested include) is walked; each pattern must be a dashboard page of the
role and cross-tenant matrix (`tests/sessions_app/dashboard/pages.py`, for every `member_view`), an API endpoint
of the API matrix below (another tenant's key gets the same 404 as for nothing, a missing key 401), or in an
explicit list of pages for signed-in people without a tenant role, or of public pages. Static files are served
by WhiteNoise's middleware, not by a pattern.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from sessions_app.dashboard.ids import quote_id
from sessions_app.models import Conversation, ConversationMerge, Receipt, Run, Score, Snapshot, ToolEffect, Wait
from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.tenancy.permissions import MINIMUM_ROLE
from tests.sessions_app.dashboard.conftest import World, _payloads, build_world, deploy_plan
from tests.sessions_app.dashboard.pages import MATRIX_TOKEN, tenant_pages

# Anyone may open these (each checks what it needs itself: a token, a form, nothing at all).
PUBLIC = {
    "healthz",
    "login",
    "logout",
    "invite/",
    "invite/<str:token>/",
    "api/v1/openapi.json",
    "s/<str:token>/",  # a share link: its signed token decides (issue 27)
    "api/v1/docs",
}

# Signed-in people, whatever their tenant and role: Django's `login_required`, no `member_view`.
SIGNED_IN = {
    "",
    "tenant/switch",
    "password/change",
    "password/change/done",
    "l/<slug:tenant_slug>/<path:rest>",  # a permalink: switches to the tenant if the person is a member there
}


@dataclass(frozen=True)
class Endpoint:
    """An API endpoint, called with a key of globex on acme's objects: `foreign` is the status it must answer."""

    route: str
    method: str
    path: str
    body: dict[str, Any] | None
    foreign: int


def api_endpoints(world: World) -> list[Endpoint]:
    run = Run.objects.filter(tenant=world.acme, conversation=world.deploy).order_by("pk").first()
    assert run is not None
    c, r = quote_id(world.deploy.external_id), quote_id(run.run_id)
    receipt = {"run_id": run.run_id, "effect": "x", "evidence": "outcome", "checked_by": "matrix"}
    wait = {"run_id": run.run_id, "owner": "o", "decision": "d", "deadline": "2999-01-01T10:00:00+00:00"}
    merge = {"conversation_id": world.deploy.external_id, "merged_conversation_id": world.quiet.external_id}
    snapshot = {**_payloads(deploy_plan(), world.deploy.external_id)[0], "run_id": run.run_id}
    effect = {"run_id": run.run_id, "tool_call_id": "call-x", "tool_name": "deploy", "status": "started"}
    return [
        # First: the calls below that globex's key makes are in globex's own log, naming the ids it asked for.
        Endpoint("api/v1/audit-events", "GET", "/api/v1/audit-events", None, 200),
        # The key alone decides the tenant: a search with globex's key searches globex (checked below: no acme hit).
        Endpoint("api/v1/search", "GET", "/api/v1/search?q=flag", None, 200),
        Endpoint(
            "api/v1/conversations/<path:conversation_id>/messages",
            "GET",
            f"/api/v1/conversations/{c}/messages?around=0",
            None,
            404,
        ),
        Endpoint(
            "api/v1/conversations/<path:conversation_id>/replay", "GET", f"/api/v1/conversations/{c}/replay", None, 404
        ),
        Endpoint("api/v1/runs/<str:run_id>/audit", "GET", f"/api/v1/runs/{r}/audit", None, 404),
        Endpoint("api/v1/conversations", "GET", "/api/v1/conversations", None, 200),
        Endpoint(
            "api/v1/conversations/<path:conversation_id>/transcript",
            "GET",
            f"/api/v1/conversations/{c}/transcript",
            None,
            404,
        ),
        Endpoint("api/v1/runs/<str:run_id>", "GET", f"/api/v1/runs/{r}", None, 404),
        Endpoint("api/v1/runs/<str:run_id>/snapshots", "GET", f"/api/v1/runs/{r}/snapshots", None, 404),
        Endpoint("api/v1/runs/<str:run_id>/snapshots/diff", "GET", f"/api/v1/runs/{r}/snapshots/diff?to=1", None, 404),
        Endpoint("api/v1/conversations/<path:conversation_id>", "GET", f"/api/v1/conversations/{c}", None, 404),
        Endpoint("api/v1/receipts", "POST", "/api/v1/receipts", receipt, 404),
        Endpoint("api/v1/waits", "POST", "/api/v1/waits", wait, 404),
        Endpoint(
            "api/v1/waits/resolve",
            "POST",
            "/api/v1/waits/resolve",
            {"run_id": run.run_id, "resume_token": MATRIX_TOKEN},
            404,
        ),
        Endpoint("api/v1/tool-effects", "POST", "/api/v1/tool-effects", effect, 404),
        Endpoint("api/v1/merges", "POST", "/api/v1/merges", merge, 404),
        # Writes that name no acme object: what they store goes to globex, and acme is left as it was.
        Endpoint(
            "api/v1/agents/<str:name>/prompt-contract",
            "POST",
            "/api/v1/agents/deploy_agent/prompt-contract",
            {"kind": "dynamic"},
            200,
        ),
        Endpoint("api/v1/snapshots", "POST", "/api/v1/snapshots", snapshot, 201),
        Endpoint("v1/traces", "POST", "/v1/traces", {"resourceSpans": []}, 200),
        Endpoint(
            "api/v1/scores",
            "POST",
            "/api/v1/scores",
            {"conversation_id": world.deploy.external_id, "name": "helpfulness", "value": 4},
            404,
        ),
        # The MCP server: the key decides the tenant as above (its tools are tested in test_mcp_server.py).
        Endpoint("mcp", "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 200),
    ]


def _join(prefix: str, pattern: str) -> str:
    # As Django's ResolverMatch.route joins them: a regex's leading '^' goes when something comes before it.
    return prefix + pattern.removeprefix("^") if prefix else pattern


def url_patterns(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[tuple[str, Callable[..., Any]]]:
    """(route, view) of every pattern under `resolver`, nested includes walked."""
    for entry in (resolver or get_resolver()).url_patterns:
        route = _join(prefix, str(entry.pattern))
        if isinstance(entry, URLResolver):
            yield from url_patterns(entry, route)
        else:
            assert isinstance(entry, URLPattern)
            yield route, entry.callback


def route_of(path: str) -> str:
    return resolve(path.partition("?")[0]).route


@pytest.fixture
def world(db: None, settings: Any) -> World:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world()


def _key(world: World, tenant_slug: str) -> str:
    tenant = world.acme if tenant_slug == "acme" else world.globex
    _, raw = create_api_key(tenant, "server", f"url-matrix-{tenant_slug}")
    return raw


def _call(client: Client, endpoint: Endpoint, key: str | None) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    headers["Accept"] = "application/json, text/event-stream"  # the MCP server's transport asks for both
    if endpoint.method == "POST":
        return client.post(endpoint.path, endpoint.body or {}, content_type="application/json", headers=headers)
    return client.get(endpoint.path, headers=headers)


def test_every_url_pattern_is_in_a_matrix_or_a_list(world: World) -> None:
    pages = {route_of(page.url) for page in tenant_pages(world.acme, world.deploy)}
    endpoints = {endpoint.route for endpoint in api_endpoints(world)}
    missing = []
    for route, view in url_patterns():
        if hasattr(view, "required_action"):
            if route not in pages:
                missing.append(f"{route!r} ({view.__module__}.{view.__name__}) is a member_view missing from pages.py")
        elif route not in endpoints | PUBLIC | SIGNED_IN:
            missing.append(f"{route!r} ({view.__module__}.{view.__name__}) is in no matrix and no list")
    assert not missing, "\n".join(missing)


def test_the_lists_name_only_patterns_that_exist(world: World) -> None:
    routes = {route for route, _ in url_patterns()}
    endpoints = {endpoint.route for endpoint in api_endpoints(world)}
    assert (PUBLIC | SIGNED_IN | endpoints) - routes == set()


def test_each_page_row_gives_the_lowest_role_its_view_requires(world: World) -> None:
    # `member_view` marks each view with its action: the matrix's role must be the action's minimum role.
    for page in tenant_pages(world.acme, world.deploy):
        view = resolve(page.url.partition("?")[0]).func
        assert MINIMUM_ROLE[view.required_action] == page.role, page.name  # type: ignore[attr-defined]


def test_public_pages_answer_without_signing_in(world: World, client: Client) -> None:
    for route, _ in url_patterns():
        if route in PUBLIC:
            path = "/" + route.replace("<str:token>", "no-such-token")
            response = client.get(path)
            assert response.status_code in (200, 404, 405), (route, response.status_code)
            assert "/login" not in response.get("Location", "") or route == "login", route


def test_signed_in_pages_send_strangers_to_the_login(world: World, client: Client) -> None:
    for route in SIGNED_IN:
        path = "/" + route.replace("<slug:tenant_slug>/<path:rest>", "acme/c/conv-deploy/")
        response = client.post(path) if route == "tenant/switch" else client.get(path)
        assert response.status_code == 302, route
        assert response["Location"].startswith("/login"), route


def test_every_api_endpoint_refuses_a_missing_key(world: World, client: Client) -> None:
    for endpoint in api_endpoints(world):
        response = _call(client, endpoint, None)
        assert response.status_code == 401, (endpoint.route, response.status_code)


def _acme_rows(world: World) -> dict[str, int]:
    return {
        model.__name__: model.objects.filter(tenant=world.acme).count()
        for model in (Conversation, ConversationMerge, Run, Snapshot, Receipt, Wait, ToolEffect, Score)
    }


def test_a_key_of_another_tenant_gets_404_and_changes_nothing(world: World, client: Client) -> None:
    tenant_pages(world.acme, world.deploy)  # acme's wait with the matrix token
    globex_key = _key(world, "globex")
    before = _acme_rows(world)
    for endpoint in api_endpoints(world):
        response = _call(client, endpoint, globex_key)
        assert response.status_code == endpoint.foreign, (endpoint.route, response.status_code, response.content)
        if endpoint.method == "GET" and endpoint.foreign != 404:  # a 404 names the id it was asked for
            assert b"conv-deploy" not in response.content, endpoint.route
    assert _acme_rows(world) == before


def test_the_same_calls_with_acme_s_own_key_reach_acme(world: World, client: Client) -> None:
    # The 404s above are the tenant's doing: with the owner's key the object endpoints find the object.
    acme_key = _key(world, "acme")
    for endpoint in api_endpoints(world):
        if endpoint.method == "GET" and endpoint.foreign == 404:
            response = _call(client, endpoint, acme_key)
            assert response.status_code != 404, (endpoint.route, response.status_code)
