"""Back, Forward and reload always get the whole page: fragments vary on HX-Request and are never stored."""

import pytest

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
RESTORE = {"HTTP_HX_REQUEST": "true", "HTTP_HX_HISTORY_RESTORE_REQUEST": "true"}


@pytest.mark.parametrize("url", ["/search/?q=quokka", "/conversations/?verdict=READY"])
def test_a_fragment_varies_on_hx_request_and_is_never_stored(as_role, url):
    response = as_role("support").get(url, **HX)
    assert "<html" not in response.content.decode()
    assert "HX-Request" in response["Vary"]
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize("url", ["/search/?q=quokka", "/conversations/?verdict=READY"])
def test_the_page_at_the_same_url_varies_on_hx_request_too(as_role, url):
    response = as_role("support").get(url)
    assert "<html" in response.content.decode()
    assert "HX-Request" in response["Vary"]
    # Not a cached fragment: the page itself is no-store only because it holds a signed-in tenant's data
    # (sessions_app.api.middleware), which no fragment rule decides.
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]


@pytest.mark.parametrize("url", ["/search/?q=quokka", "/conversations/?verdict=READY"])
def test_a_history_restore_request_gets_the_whole_page_with_matching_controls(as_role, url):
    body = as_role("support").get(url, **RESTORE).content.decode()
    assert "<html" in body
    assert 'value="quokka"' in body or 'value="READY" selected' in body
