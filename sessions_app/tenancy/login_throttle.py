"""Login rate limiting: after too many failed attempts for one username or one address, refuse for a while.

Counts live in Django's cache (per process with the default local-memory cache; configure a shared cache such as
Redis or the database cache when several processes serve logins). Keys hash the username so the cache never
holds it in clear.
"""

import hashlib

from django.conf import settings
from django.core.cache import cache

MAX_FAILURES = getattr(settings, "SESSIONDESK_LOGIN_MAX_FAILURES", 5)
WINDOW_SECONDS = getattr(settings, "SESSIONDESK_LOGIN_WINDOW_SECONDS", 15 * 60)


def _keys(username: str, address: str) -> list[str]:
    user_digest = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return [f"login-fail:user:{user_digest}", f"login-fail:addr:{address}"]


def is_blocked(username: str, address: str) -> bool:
    """True when the username or the address reached MAX_FAILURES within the window."""
    counts = cache.get_many(_keys(username, address))
    return any(count >= MAX_FAILURES for count in counts.values())


def record_failure(username: str, address: str) -> None:
    for key in _keys(username, address):
        # add() starts the window on the first failure; incr() keeps its expiry.
        if not cache.add(key, 1, WINDOW_SECONDS):
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, WINDOW_SECONDS)


def record_success(username: str, address: str) -> None:
    """A successful login clears the username's count (the address keeps its count: one host, many names)."""
    cache.delete(_keys(username, address)[0])
