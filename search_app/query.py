"""Parse a search query into clauses, with the same tokenizer the index uses. Pure.

Syntax: words (each scores on its own; a document needs at least one), `"quoted phrases"`, `-word` or
`-"phrase"` to exclude, `prefix*`. A word that the tokenizer splits (an identifier such as `rollback-v2.sh` or
`QUOKKA-5521`) is the phrase of its parts, so it matches the identifier and not the parts scattered about.
A run of CJK characters is searched by its bigrams, each scoring on its own, as Lucene's CJK analyzer does.
"""

import re
from dataclasses import dataclass

from search_app.tokenize import Token, prepare, tokens

MAX_QUERY_CHARS = 4096
MIN_PREFIX_CHARS = 2


class QueryError(ValueError):
    """The query cannot be searched; the message says why, in words a caller can act on."""


@dataclass(frozen=True, slots=True)
class Term:
    term: str


@dataclass(frozen=True, slots=True)
class Phrase:
    terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Prefix:
    prefix: str


Clause = Term | Phrase | Prefix


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    should: tuple[Clause, ...]
    must_not: tuple[Clause, ...]

    def terms_to_find(self) -> tuple[Clause, ...]:
        """Clauses whose documents are candidates: every positive clause."""
        return self.should


_CHUNK = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')


def _runs(found: list[Token]) -> tuple[list[str], list[list[str]]]:
    """Split a chunk's tokens into its words and its runs of adjacent CJK characters."""
    words: list[str] = []
    cjk_runs: list[list[str]] = []
    previous_end = None
    for token in found:
        if token.cjk:
            if cjk_runs and previous_end == token.start and cjk_runs[-1]:
                cjk_runs[-1].append(token.term)
            else:
                cjk_runs.append([token.term])
        else:
            words.append(token.term)
        previous_end = token.end
    return words, cjk_runs


def _word_clauses(chunk: str, *, negated: bool) -> list[Clause]:
    words, cjk_runs = _runs(tokens(prepare(chunk)))
    clauses: list[Clause] = []
    if len(words) == 1:
        clauses.append(Term(words[0]))
    elif words:
        clauses.append(Phrase(tuple(words)))
    for run in cjk_runs:
        if len(run) == 1:
            clauses.append(Term(run[0]))
        elif negated:
            # Excluding any one bigram would drop documents that merely share a character pair.
            clauses.append(Phrase(tuple(run)))
        else:
            clauses.extend(Term(a + b) for a, b in zip(run, run[1:], strict=False))
    return clauses


def _prefix_clauses(chunk: str, *, negated: bool) -> list[Clause]:
    stem = chunk.rstrip("*")
    found = tokens(prepare(stem))
    if not found:
        return []
    *head, last = found
    if last.cjk or len(last.term) < MIN_PREFIX_CHARS:
        raise QueryError(
            f"The prefix in {chunk!r} is too short: a prefix search needs at least "
            f"{MIN_PREFIX_CHARS} letters or digits before the '*'."
        )
    clauses = _word_clauses(stem[: last.start], negated=negated) if head else []
    clauses.append(Prefix(last.term))
    return clauses


def _phrase_clauses(text: str) -> list[Clause]:
    terms = tuple(token.term for token in tokens(prepare(text)))
    if not terms:
        return []
    return [Term(terms[0])] if len(terms) == 1 else [Phrase(terms)]


def parse_query(query: str) -> ParsedQuery:
    """The clauses of `query`, or `QueryError` naming what is wrong with it."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"The query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}.")
    if not query.strip():
        raise QueryError("The query is empty: give at least one word to search for.")
    should: list[Clause] = []
    must_not: list[Clause] = []
    for match in _CHUNK.finditer(query):
        if match.group(2) is not None:
            negated, clauses = bool(match.group(1)), _phrase_clauses(match.group(2))
        else:
            negated, chunk = bool(match.group(3)), match.group(4)
            if chunk.endswith("*"):
                clauses = _prefix_clauses(chunk, negated=negated)
            else:
                clauses = _word_clauses(chunk, negated=negated)
        (must_not if negated else should).extend(clauses)
    should = list(dict.fromkeys(should))
    must_not = list(dict.fromkeys(must_not))
    if not should:
        if must_not:
            raise QueryError("The query only excludes words: give at least one word to search for.")
        raise QueryError("The query has no letters or digits to search for.")
    return ParsedQuery(should=tuple(should), must_not=tuple(must_not))
