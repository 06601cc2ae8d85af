"""The API reference page renders the server's OpenAPI document in Chromium from the product's own static
files: every operation listed, no console error (the Content-Security-Policy holds), no request leaving it."""

import pytest

from sessions_app.api.openapi import document

pytestmark = pytest.mark.browser


def test_the_reference_renders_every_operation_and_requests_nothing_elsewhere(page, live_server, transactional_db):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    failed: list[str] = []
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    page.goto(f"{live_server.url}/api/v1/docs")
    page.wait_for_selector(".opblock-summary-path")
    shown = {
        f"{element.get_attribute('data-path')}" for element in page.locator(".opblock-summary-path").element_handles()
    }
    assert shown == set(document()["paths"])
    assert page.locator(".info .title").inner_text().startswith("Sessiondesk API")
    elsewhere = [url for url in requested if not url.startswith((live_server.url, "data:", "blob:"))]
    assert requested and not elsewhere, elsewhere
    assert f"{live_server.url}/api/v1/openapi.json" in requested
    assert failed == [] and page.console_errors == []
