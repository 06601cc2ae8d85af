"""The seam every ranker sits behind (as tantivy's `Weight` and Lucene's `Weight`/`Collector` do).

A ranker kind says whether it can rank a search (`rankable`); built for one search, it answers the top `window`
documents (`rank`) for as many windows as the pages need, and the exact number of matches (`count`). All rankers
rank exactly alike (the conformance tests run each against brute force); they differ only in speed.
"""

from dataclasses import dataclass
from typing import Protocol

from search_app.backends.base import Filters, Scope
from search_app.bm25 import Bm25Params, ScopeStats
from search_app.query import ParsedQuery

Ranked = list[tuple[int, float]]
"""(document id, score), best first, ties by id."""


@dataclass(frozen=True, slots=True)
class MatchCounts:
    messages: int = 0
    conversations: int = 0
    lower_bound: bool = False
    """True when more than the count bound matched: both numbers are then lower bounds, not exact counts."""


@dataclass(frozen=True, slots=True)
class RankInput:
    """One search as a ranker sees it: the query, the documents it covers and their statistics, the filters."""

    query: ParsedQuery
    scope: Scope
    stats: ScopeStats
    filters: Filters
    params: Bm25Params


class Ranker(Protocol):
    def rank(self, window: int) -> tuple[Ranked, int | None]:
        """The top `window` of the scope, and the number of matches when the ranker counted them on the way."""
        ...

    def count(self, ranked_total: int | None) -> MatchCounts:
        """Matching messages and their conversations, exactly; `ranked_total` is what the last `rank` said."""
        ...


class RankerKind(Protocol):
    """A ranker class: whether it ranks this search, and the ranker built for it."""

    def rankable(self, query: ParsedQuery, scope: Scope, filters: Filters) -> bool: ...

    def __call__(self, search: RankInput) -> Ranker: ...
