"""What a search answers: the response types every interface serializes, and the cut to the response size.

Apart from the steps that fill them (search_app.service, .identify, .hits), so that each step imports the types
without importing the orchestration.
"""

import json
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

MAX_RESPONSE_BYTES = 32 * 1024

JsonDict = dict[str, object]


def record_dict(record: "DataclassInstance") -> JsonDict:
    """A flat dataclass's fields as JSON values: timestamps in ISO 8601.

    Field by field, not `dataclasses.asdict`: every field here is a scalar, and asdict's deep copy of each was about
    6 % of an API search (profiled)."""
    values = ((f.name, getattr(record, f.name)) for f in fields(record))
    return {name: value.isoformat() if isinstance(value, datetime) else value for name, value in values}


def encoded_size(data: JsonDict) -> int:
    """Bytes of `data` as the JSON response carries it."""
    return len(json.dumps(data, ensure_ascii=False).encode())


@dataclass(frozen=True)
class SearchHit:
    entry_id: int
    tenant: str
    conversation_pk: int
    conversation_id: str
    run_id: str
    agent: str
    position: int
    role: str
    timestamp: datetime | None
    score: float
    snippet: str
    snippet_html: str
    # False when compaction dropped the message from the agent's live history (kept only in the record).
    in_live_context: bool = True

    def as_dict(self) -> JsonDict:
        return record_dict(self)


@dataclass(frozen=True)
class Identified:
    """A conversation, run or tool call whose id is exactly the query: answered before any ranked result."""

    kind: str  # "conversation", "run" or "tool_call"
    tenant: str
    conversation_id: str
    run_id: str = ""
    position: int | None = None
    role: str = ""

    def as_dict(self) -> JsonDict:
        return record_dict(self)


@dataclass
class SearchResponse:
    identified: list[Identified] = field(default_factory=list)
    """What the query names exactly (by conversation, run or tool-call id), first page only."""
    results: list[SearchHit] = field(default_factory=list)
    indexing: bool = False
    reindexing: bool = False
    """Some conversation of the scope waits for a rebuild and is left out of these results until it is done."""
    truncated: bool = False
    message: str = ""
    scope: str = "conversation"
    total_matches: int = 0
    """Matching messages in the scope (all pages): exact, or a lower bound when `total_is_lower_bound`."""
    total_conversations: int = 0
    """Conversations holding at least one matching message: exact, or a lower bound when `total_is_lower_bound`."""
    total_is_lower_bound: bool = False
    """More messages matched than are counted exactly (search_app.ranking.counting.count_bound): both totals are
    then lower bounds (shown as "10,000+"); paging is exact all the same."""
    offset: int = 0
    """Results on earlier pages: this page shows results offset + 1 to offset + len(results)."""
    next_cursor: str | None = None
    """Pass as `cursor` with the same search for the next page; None on the last page."""

    def as_dict(self) -> JsonDict:
        return {
            "identified": [item.as_dict() for item in self.identified],
            "results": [hit.as_dict() for hit in self.results],
            "indexing": self.indexing,
            "reindexing": self.reindexing,
            "truncated": self.truncated,
            "message": self.message,
            "scope": self.scope,
            "total_matches": self.total_matches,
            "total_conversations": self.total_conversations,
            "total_is_lower_bound": self.total_is_lower_bound,
            "offset": self.offset,
            "next_cursor": self.next_cursor,
        }


def fit_response(response: SearchResponse, max_bytes: int = MAX_RESPONSE_BYTES) -> SearchResponse:
    """Drop the lowest-ranked hits until the JSON response fits `max_bytes`, saying so with `truncated`."""
    while response.results and encoded_size(response.as_dict()) > max_bytes:
        response.results.pop()
        response.truncated = True
    return response
