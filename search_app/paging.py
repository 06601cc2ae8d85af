"""The opaque cursor of a search's next page: where the last page ended, signed, and bound to its search.

Results are ordered by score descending, then document id (every ranker breaks ties the same way), so a page is
"the first `limit` results after (score, id)". The cursor carries that key, the number of results already shown,
and a point in time: the highest document id and the scope's statistics when the first page was answered. Later
pages rank only documents up to that id with those statistics, so every score is the one the first page saw and
the pages walk one ranking: messages that arrive meanwhile (or conversations rebuilt meanwhile, whose documents
get new ids) are left out until the search is repeated, and the counts stay those of the first page. The cursor
is signed with the server's secret (django.core.signing), so a changed cursor is refused rather than
trusted, and it names a fingerprint of the search it continues, so it cannot page through a different query,
scope or filters. A cursor holds no message text and no id the caller did not already receive.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.core import signing

from search_app.errors import SearchError

MAX_DEPTH = 1000
"""Paging stops after this many results: past it, narrowing the search serves a reader better than paging."""

_SALT = "search_app.paging"
MAX_CURSOR_CHARS = 512

INVALID = (
    "The cursor is not valid: it was changed, cut short or issued by another server. "
    "Repeat the search without a cursor to start from the first page."
)
OTHER_SEARCH = (
    "The cursor belongs to a different search (another query, scope or filters): "
    "page with the same parameters that returned it, or start again without a cursor."
)


@dataclass(frozen=True, slots=True)
class PageCursor:
    offset: int
    score: float
    key: int
    max_document_id: int
    documents: int
    total_length: int

    def after(self, score: float, key: int) -> bool:
        """Whether (score, key) comes after this cursor in the ranking order."""
        return score < self.score or (score == self.score and key > self.key)


def fingerprint(
    *,
    query: str,
    scope: str,
    conversation_id: str | None,
    run_id: str | None,
    roles: Sequence[str],
    agent: str | None,
    since: datetime | None,
    until: datetime | None,
    tenant_ids: Sequence[int],
) -> str:
    search = [
        query,
        scope,
        conversation_id,
        run_id,
        sorted(roles),
        agent,
        since.isoformat() if since else None,
        until.isoformat() if until else None,
        sorted(tenant_ids),
    ]
    return hashlib.sha256(json.dumps(search, ensure_ascii=False).encode()).hexdigest()[:24]


def encode(cursor: PageCursor, search: str) -> str:
    fields = [cursor.offset, cursor.score, cursor.key, cursor.max_document_id, cursor.documents, cursor.total_length]
    return signing.dumps([*fields, search], salt=_SALT, compress=False)


def decode(raw: object, search: str) -> PageCursor:
    """The cursor, or `SearchError` naming what is wrong with it."""
    if not isinstance(raw, str) or not raw or len(raw) > MAX_CURSOR_CHARS:
        raise SearchError(INVALID)
    try:
        *fields, made_for = signing.loads(raw, salt=_SALT)
        offset, score, key, max_document_id, documents, total_length = fields
    except (signing.BadSignature, ValueError, TypeError):
        raise SearchError(INVALID) from None
    if made_for != search:
        raise SearchError(OTHER_SEARCH)
    whole = (offset, key, max_document_id, documents, total_length)
    if not (all(isinstance(n, int) for n in whole) and isinstance(score, float)):
        raise SearchError(INVALID)
    if offset >= MAX_DEPTH:
        raise SearchError(
            f"Paging stops after the first {MAX_DEPTH} results: narrow the search (more words, a phrase, "
            "a role, agent or time filter) to see the rest."
        )
    return PageCursor(offset, score, key, max_document_id, documents, total_length)
