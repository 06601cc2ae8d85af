"""Parse a search query into clauses, with the same tokenizer the index uses. Pure.

Syntax: words (each scores on its own; a document needs at least one), `"quoted phrases"`, `-word` or
`-"phrase"` to exclude, `prefix*` (at most MAX_PREFIXES distinct prefixes a query). A word that the tokenizer
splits (an identifier such as `rollback-v2.sh` or `QUOKKA-5521`) is the phrase of its parts, so it matches the
identifier and not the parts scattered about. A run of CJK characters is searched by its bigrams, each scoring
on its own, as Lucene's CJK analyzer does.

Filters narrow what is searched without scoring: `conversation:ID`, `run:ID`, `agent:NAME`, `tool:NAME` and
`role:ROLE` (a value with spaces in quotes: `agent:"release bot"`). Keys are case-insensitive; `role:` may be
given several times (any of them), the others once. A filter is not a word: to search for the text `role:user`,
quote it. Which values exist (a role's name, an id of the caller's tenant) is decided by search_app.validation and
search_app.scope.
"""

import re
from dataclasses import dataclass

from search_app.tokenize import Token, prepare, tokens

MAX_QUERY_CHARS = 4096
MIN_PREFIX_CHARS = 2
MAX_PREFIXES = 8
"""Prefix searches in one query (`deploy*`), kept or excluded: each expands to every indexed term it starts, and
the candidates are read once per prefix, so 420 two-letter prefixes held a worker for 29 s. Past this: 400."""


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


FILTER_KEYS = ("conversation", "run", "agent", "tool", "role")
MAX_FILTER_VALUE_CHARS = 400


@dataclass(frozen=True, slots=True)
class QueryFilters:
    """The `key:value` filters of a query; None (or no roles) where the query sets none."""

    conversation: str | None = None
    run: str | None = None
    agent: str | None = None
    tool: str | None = None
    roles: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    should: tuple[Clause, ...]
    must_not: tuple[Clause, ...]
    filters: QueryFilters = QueryFilters()


_CHUNK = re.compile(
    r'(?P<fneg>-?)(?P<key>(?i:conversation|run|agent|tool|role)):(?:"(?P<quoted>[^"]*)"?|(?P<bare>[^\s"]\S*))?'
    r'|(?P<pneg>-?)"(?P<phrase>[^"]*)"?|(?P<wneg>-?)(?P<word>\S+)'
)


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
    found: dict[str, list[str]] = {key: [] for key in FILTER_KEYS}
    for match in _CHUNK.finditer(query):
        if match.group("key") is not None:
            found[match.group("key").lower()].append(_filter_value(match))
            continue
        if match.group("phrase") is not None:
            negated, clauses = bool(match.group("pneg")), _phrase_clauses(match.group("phrase"))
        else:
            negated, chunk = bool(match.group("wneg")), match.group("word")
            if chunk.endswith("*"):
                clauses = _prefix_clauses(chunk, negated=negated)
            else:
                clauses = _word_clauses(chunk, negated=negated)
        (must_not if negated else should).extend(clauses)
    filters = _filters(found)
    prefixes = {clause.prefix for clause in (*should, *must_not) if isinstance(clause, Prefix)}
    if len(prefixes) > MAX_PREFIXES:
        raise QueryError(f"The query has {len(prefixes)} prefix searches ('word*'); the limit is {MAX_PREFIXES}.")
    should = list(dict.fromkeys(should))
    must_not = list(dict.fromkeys(must_not))
    if not should:
        if filters != QueryFilters():
            raise QueryError("The query only has filters: give at least one word to search for as well.")
        if must_not:
            raise QueryError("The query only excludes words: give at least one word to search for.")
        raise QueryError("The query has no letters or digits to search for.")
    return ParsedQuery(should=tuple(should), must_not=tuple(must_not), filters=filters)


def _filter_value(match: re.Match[str]) -> str:
    key = match.group("key").lower()
    if match.group("fneg"):
        raise QueryError(
            f"'-{key}:' cannot exclude: filters only narrow the search. To exclude the words, quote them: "
            f'-"{key}:…".'
        )
    value = match.group("quoted") if match.group("quoted") is not None else match.group("bare")
    if value is None or not value.strip():
        raise QueryError(f"The filter '{key}:' has no value: write {key}:VALUE, or {key}:\"a value\" with spaces.")
    if len(value) > MAX_FILTER_VALUE_CHARS:
        raise QueryError(
            f"The value of '{key}:' is {len(value)} characters long; the limit is {MAX_FILTER_VALUE_CHARS}."
        )
    return value.strip()


def _filters(found: dict[str, list[str]]) -> QueryFilters:
    single: dict[str, str | None] = {}
    for key in ("conversation", "run", "agent", "tool"):
        values = list(dict.fromkeys(found[key]))
        if len(values) > 1:
            raise QueryError(
                f"The query names {len(values)} values for '{key}:' ({', '.join(repr(v[:40]) for v in values[:3])}): "
                "a search narrows to one."
            )
        single[key] = values[0] if values else None
    roles = tuple(dict.fromkeys(role.lower() for role in found["role"]))
    return QueryFilters(
        conversation=single["conversation"], run=single["run"], agent=single["agent"], tool=single["tool"], roles=roles
    )
