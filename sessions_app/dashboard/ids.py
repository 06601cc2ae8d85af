"""Conversation and run ids in URLs: the agent's own ids, quoted the way `reverse` quotes them.

An id may hold any character (spaces, slashes, `?`, `#`, `%`); `<path:…>` URL patterns take it back decoded.
`conversation_url` and `run_url` build the same URLs as `reverse("conversation", …)` without the resolver's cost,
for pages that link many rows.
"""

from urllib.parse import quote

from django.utils.http import escape_leading_slashes

# What Django's reverse() leaves unquoted in a path (RFC 3986 sub-delims and pchar extras).
_SAFE = "!$&'()*+,;=/~:@"


def quote_id(value: str) -> str:
    """Pure: `value` as a URL path piece (a slash stays a slash; the `<path:…>` pattern takes it whole)."""
    return quote(value, safe=_SAFE)


def conversation_url(conversation_id: str) -> str:
    return escape_leading_slashes(f"/c/{quote_id(conversation_id)}/")


def run_url(run_id: str) -> str:
    return escape_leading_slashes(f"/r/{quote_id(run_id)}/")
