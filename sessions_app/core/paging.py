"""Keyset (seek) page cursors for the lists of the dashboard: opaque in a URL, and one error for a bad one. Pure.

A cursor carries the last row of a page, so the next page starts strictly after it on an index. Two shapes are
in use, and links already handed out keep working: the conversation list's (sort value, id) pair, as URL-safe
base64 of JSON; the audit log's bare row id, in decimal.
"""

import base64
import json
from datetime import datetime

BAD_CURSOR = "That page link is not valid; start again from the first page."


class BadCursor(ValueError):
    """A page link that is not one of ours (edited, cut short, or from another list)."""

    def __init__(self, message: str = BAD_CURSOR) -> None:
        super().__init__(message)


def encode_key(value: datetime | int, pk: int) -> str:
    """The cursor after the row whose sort value is `value` and id `pk`."""
    raw = value.isoformat() if isinstance(value, datetime) else value
    return base64.urlsafe_b64encode(json.dumps([raw, pk]).encode()).decode().rstrip("=")


def decode_key(token: str, *, dated: bool) -> tuple[datetime | int, int]:
    """The (value, pk) an `encode_key` cursor carries, the value a datetime when `dated`; BadCursor otherwise."""
    try:
        raw, pk = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if not isinstance(pk, int):
            raise TypeError
        value: datetime | int = datetime.fromisoformat(raw) if dated else int(raw)
    except (ValueError, TypeError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BadCursor from error
    return value, pk


def decode_id(token: str | None) -> int | None:
    """The row id a bare-id cursor carries, None for no cursor; BadCursor for anything else."""
    if not token:
        return None
    if not token.isdigit():
        raise BadCursor
    return int(token)
