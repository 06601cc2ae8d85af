"""CSRF on every form and HTMX post, a Content-Security-Policy with no inline script, cookies, static files."""

import re

from django.test import Client

from tests.sessions_app.dashboard.pages import tenant_pages


def test_pages_carry_a_strict_content_security_policy(world, as_role):
    response = as_role("admin").get("/conversations/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy


def test_no_page_has_inline_script_or_inline_style(world, as_role):
    client = as_role("admin")
    for page in tenant_pages(world.acme, world.deploy):
        if page.method != "GET" or "export" in page.name or "csv" in page.name:
            continue
        html = client.get(page.url).content.decode()
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag, (page.name, tag)
        assert not re.search(r"<script\b[^>]*>\s*(?!</script>)\S", html), page.name
        assert " style=" not in html, page.name
        assert " onclick=" not in html and " hx-on" not in html, page.name


def test_posts_without_a_csrf_token_are_refused(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["admin"])
    for page in tenant_pages(world.acme, world.deploy):
        if page.method == "POST":
            assert client.post(page.url, dict(page.data)).status_code == 403, page.name


def test_htmx_posts_send_the_token_from_the_body_header(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["admin"])
    html = client.get("/conversations/").content.decode()
    token = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", html).group(1)
    from sessions_app.models import TranscriptEntry

    position = TranscriptEntry.objects.filter(conversation=world.deploy).first().position
    response = client.post(
        f"/c/{world.deploy.external_id}/reveal/{position}", HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200


def test_htmx_and_the_keyboard_script_are_served_by_the_app(world, as_role):
    html = as_role("support").get("/conversations/").content.decode()
    sources = re.findall(r'<script src="([^"]+)"', html)
    assert sources == ["/static/vendor/htmx-2.0.11.min.js", "/static/js/keys.js"]
    assert all(not src.startswith("http") for src in sources)


def test_the_login_page_is_usable_without_a_session(world):
    response = Client().get("/login")
    assert response.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in response.content
