"""When search as you type adds a history entry and when it replaces the one it is still typing. Pure.

Each pause while typing sends a search; pushing each one made Back walk through "refund ", "refund order ",
"refund order 9018" (B5). A search that extends or shortens the one on screen is the same search still being
typed, so it replaces that entry; a different search, or the first one from an empty box, is a new entry.
"""


def continues_typing(on_screen: str, typed: str) -> bool:
    """True when `typed` is the query `on_screen` still being typed (a word added or taken away)."""
    before, now = on_screen.strip(), typed.strip()
    if not before or not now:
        return False
    return now.startswith(before) or before.startswith(now)
