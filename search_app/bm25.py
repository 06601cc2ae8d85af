"""Exact BM25 with Lucene's formula, over candidate documents and the statistics of the searched scope. Pure.

    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(t, d) = idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))

N, avgdl: documents and mean length (in index terms) of the scope searched (a conversation, a run, a tenant, a
set of tenants), not of the whole store and not of the candidates. df counts the scope's documents holding
the term; the candidates are every document of the scope holding any query term, so counting them is exact.
As in Lucene, a phrase scores with the sum of its terms' idf and its own frequency in the document, and a
prefix scores as the BM25 sum of the indexed terms it expands to (Lucene's scoring-boolean rewrite).
Lucene stores document lengths in one lossy byte; we keep them exact (as bm25s's "lucene" method does), so
scores are the formula's, not an approximation of it.
"""

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from search_app.query import Clause, ParsedQuery, Phrase, Prefix, Term
from search_app.tokenize import base_stream, is_cjk


@dataclass(frozen=True, slots=True)
class Bm25Params:
    k1: float = 1.2
    b: float = 0.75

    def __post_init__(self) -> None:
        if not math.isfinite(self.k1) or self.k1 < 0:
            raise ValueError(f"BM25 k1 must be a non-negative finite number, got {self.k1!r}")
        if not 0.0 <= self.b <= 1.0:
            raise ValueError(f"BM25 b must be between 0 and 1, got {self.b!r}")


@dataclass(frozen=True, slots=True)
class ScopeStats:
    documents: int
    total_length: int

    @property
    def average_length(self) -> float:
        return self.total_length / self.documents if self.documents else 0.0


@dataclass(slots=True)
class Document:
    """A candidate: its key, its index terms joined by single spaces, and whether the caller may see it.

    Term and phrase frequencies are counted as substrings of the terms with doubled spaces, where every
    occurrence of ` term ` (or ` a  b `) is distinct and non-overlapping; the SQL ranker counts the same way.
    """

    key: int
    text: str
    visible: bool = True
    length: int | None = None
    _padded: str | None = field(default=None, repr=False)
    _counts: Counter[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.length is None:
            self.length = self.text.count(" ") + 1 if self.text else 0

    @property
    def padded(self) -> str:
        if self._padded is None:
            self._padded = "  " + self.text.replace(" ", "  ") + "  "
        return self._padded

    @property
    def counts(self) -> Counter[str]:
        """Every term's frequency (needed only to expand prefixes)."""
        if self._counts is None:
            self._counts = Counter(self.text.split(" ")) if self.text else Counter()
        return self._counts

    def has(self, term: str) -> bool:
        return f" {term} " in self.padded

    def tf(self, term: str) -> int:
        return self.padded.count(f" {term} ")

    def phrase_frequency(self, phrase: Sequence[str]) -> int:
        if any(is_cjk(term[0]) for term in phrase):
            # CJK bigrams sit between the characters in the stored stream; match on the stream without them.
            return phrase_frequency(base_stream(self.text.split(" ")), phrase)
        return self.padded.count(" " + "  ".join(phrase) + " ")


def idf(df: int, documents: int) -> float:
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


def tf_norm(tf: int, length: int, average_length: float, params: Bm25Params) -> float:
    if tf <= 0:
        return 0.0
    relative = length / average_length if average_length > 0 else 0.0
    return tf / (tf + params.k1 * (1.0 - params.b + params.b * relative))


def phrase_frequency(base: Sequence[str], phrase: Sequence[str]) -> int:
    """How often `phrase` occurs in `base` as consecutive terms, counting non-overlapping occurrences.

    Non-overlapping ("a a" occurs once in "a a a") so that the SQL ranking, which counts with `replace()`,
    gives the same number.
    """
    n = len(phrase)
    if n == 0 or n > len(base):
        return 0
    wanted = list(phrase)
    count, i = 0, 0
    while i <= len(base) - n:
        if base[i] == wanted[0] and list(base[i : i + n]) == wanted:
            count += 1
            i += n
        else:
            i += 1
    return count


def _clause_present(clause: Clause, doc: Document) -> bool:
    if isinstance(clause, Term):
        return doc.has(clause.term)
    if isinstance(clause, Prefix):
        return f" {clause.prefix}" in doc.padded
    return all(doc.has(term) for term in clause.terms) and doc.phrase_frequency(clause.terms) > 0


def excluded(query: ParsedQuery, doc: Document) -> bool:
    return any(_clause_present(clause, doc) for clause in query.must_not)


def _wanted_terms(query: ParsedQuery) -> tuple[list[str], tuple[str, ...]]:
    exact: dict[str, None] = {}
    prefixes: list[str] = []
    for clause in query.should:
        if isinstance(clause, Term):
            exact[clause.term] = None
        elif isinstance(clause, Phrase):
            exact.update(dict.fromkeys(clause.terms))
        else:
            prefixes.append(clause.prefix)
    return list(exact), tuple(prefixes)


def document_frequencies(query: ParsedQuery, docs: Iterable[Document]) -> dict[str, int]:
    """df of every query term and prefix expansion, counted over `docs`."""
    exact, prefixes = _wanted_terms(query)
    df: Counter[str] = Counter()
    for doc in docs:
        for term in exact:
            if doc.has(term):
                df[term] += 1
        if prefixes:
            for term in doc.counts:
                if term.startswith(prefixes):
                    df[term] += 1
    return dict(df)


def score(query: ParsedQuery, doc: Document, df: dict[str, int], stats: ScopeStats, params: Bm25Params) -> float:
    """The document's BM25 score for the query's positive clauses; 0.0 when none matches."""
    return _Scorer(query, df, stats, params)(doc)


def scorer(
    query: ParsedQuery, df: dict[str, int], stats: ScopeStats, params: Bm25Params
) -> Callable[["Document"], float]:
    """`score` for many documents with the same statistics: each term's idf is computed once."""
    return _Scorer(query, df, stats, params)


class _Scorer:
    """`score` with each term's idf computed once per query rather than once per document."""

    def __init__(self, query: ParsedQuery, df: dict[str, int], stats: ScopeStats, params: Bm25Params) -> None:
        self.query, self.df, self.stats, self.params = query, df, stats, params
        self.idf = {term: idf(count, stats.documents) for term, count in df.items()}

    def __call__(self, doc: Document) -> float:
        avgdl, length, params, weights = self.stats.average_length, doc.length, self.params, self.idf
        assert length is not None  # noqa: S101 - __post_init__ fills it in
        total = 0.0
        for clause in self.query.should:
            if isinstance(clause, Term):
                tf = doc.tf(clause.term)
                if tf:
                    total += weights[clause.term] * tf_norm(tf, length, avgdl, params)
            elif isinstance(clause, Phrase):
                if all(doc.has(term) for term in clause.terms):
                    freq = doc.phrase_frequency(clause.terms)
                    if freq:
                        weight = sum(weights[term] for term in clause.terms)
                        total += weight * tf_norm(freq, length, avgdl, params)
            elif f" {clause.prefix}" in doc.padded:
                for term, tf in doc.counts.items():
                    if term.startswith(clause.prefix):
                        total += weights[term] * tf_norm(tf, length, avgdl, params)
        return total


def rank(
    query: ParsedQuery, candidates: Sequence[Document], stats: ScopeStats, params: Bm25Params
) -> list[tuple[int, float]]:
    """`(key, score)` of every visible, non-excluded matching candidate, best first (ties by key).

    Statistics come from all candidates; visibility (filters, permissions) and exclusions only remove hits
    afterwards, so what a caller may not see never changes the scores of what it may.
    """
    scorer = _Scorer(query, document_frequencies(query, candidates), stats, params)
    ranked: list[tuple[int, float]] = []
    for doc in candidates:
        if not doc.visible or excluded(query, doc):
            continue
        value = scorer(doc)
        if value > 0.0:
            ranked.append((doc.key, value))
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked
