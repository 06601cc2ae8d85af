"""Pages that answer both a whole page and an HTMX fragment at one URL, without breaking Back and Forward.

htmx pushes the URL of a fragment request into history. Unless responses say they vary on `HX-Request`, the
browser may later show the cached fragment for that URL (a bare, unstyled page); and a history-restore request
(`HX-History-Restore-Request`) must get the whole page, with controls that match the results. So:
- `wants_fragment(request)` is the one test views use to choose a partial (history restores and boosted
  requests get the page);
- `HistorySafeMiddleware` adds `Vary: HX-Request` to every dashboard response and `Cache-Control: no-store` to
  fragments, so no cache ever answers a page request with a fragment.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase, HttpResponseRedirect
from django.utils.cache import patch_cache_control, patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect

from sessions_app.api.middleware import API_PREFIXES


def wants_fragment(request: HttpRequest) -> bool:
    """True for an HTMX request that swaps part of a page; False for pages, boosts and history restores."""
    htmx = getattr(request, "htmx", None)
    if not htmx:
        return False
    return not htmx.boosted and not htmx.history_restore_request


def go_to(request: HttpRequest, url: str) -> HttpResponseBase:
    """Send the browser to another page: a redirect, or for an HTMX swap a whole-page client redirect."""
    if getattr(request, "htmx", None):
        return HttpResponseClientRedirect(url)
    return HttpResponseRedirect(url)


class HistorySafeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if request.path.startswith((*API_PREFIXES, "/static/")):
            return response
        patch_vary_headers(response, ["HX-Request"])
        if wants_fragment(request):
            patch_cache_control(response, no_store=True, private=True)
        return response
