"""Conversation and run ids in URLs: the agent's own ids, quoted the way `reverse` quotes them.

An id may hold any character (spaces, slashes, `?`, `#`, `%`); `<path:…>` URL patterns take it back decoded.
`conversation_url` and `run_url` build the same URLs as `reverse("conversation", …)` without the resolver's cost,
for pages that link many rows.
"""

from urllib.parse import quote

from django.utils.http import escape_leading_slashes

from sessions_app.models import Conversation, Run, Tenant
from sessions_app.tenancy.scoping import scoped

# What Django's reverse() leaves unquoted in a path (RFC 3986 sub-delims and pchar extras).
_SAFE = "!$&'()*+,;=/~:@"


def quote_id(value: str) -> str:
    """`value` as a URL path piece (a slash stays a slash; the `<path:…>` pattern takes it whole)."""
    return quote(value, safe=_SAFE)


def conversation_url(conversation_id: str) -> str:
    return escape_leading_slashes(f"/c/{quote_id(conversation_id)}/")


def run_url(run_id: str) -> str:
    return escape_leading_slashes(f"/r/{quote_id(run_id)}/")


def url_for_pasted_id(tenant: Tenant, text: str) -> str | None:
    """The page of the tenant's conversation or run whose id is exactly `text` (as pasted), else None."""
    candidate = text.strip()
    if not candidate or len(candidate) > 200:
        return None
    if scoped(Conversation, tenant).filter(external_id=candidate).exists():
        return conversation_url(candidate)
    if scoped(Run, tenant).filter(run_id=candidate).exists():
        return run_url(candidate)
    return None
