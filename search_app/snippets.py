"""A snippet of at most 300 characters centred on the first match, and its highlighted HTML. Pure.

The HTML is built from escaped pieces of the text with `<mark>` around matches: message text is never
trusted as markup. Callers redact before calling, so positions refer to the text that will be shown.
"""

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from itertools import chain

from search_app.query import ParsedQuery, Phrase, Prefix, Term
from search_app.tokenize import MAX_DOCUMENT_CHARS, Token, is_bigram, iter_tokens, prepare

MAX_SNIPPET_CHARS = 300
MAX_SCANNED_CHARS = MAX_DOCUMENT_CHARS
"""A snippet reads at most this many characters of a message: the index keeps no more terms than that, so a hit's
match lies within them, and a multi-megabyte tool result costs no more than this to show."""
ELLIPSIS = "…"
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Snippet:
    text: str
    html: str


def _highlighter(query: ParsedQuery) -> Callable[[Token], bool]:
    exact: set[str] = set()
    prefixes: list[str] = []
    for clause in query.should:
        if isinstance(clause, Term):
            # A CJK bigram is shown by marking both of its characters.
            exact.update(clause.term if is_bigram(clause.term) else (clause.term,))
        elif isinstance(clause, Phrase):
            exact.update(clause.terms)
        elif isinstance(clause, Prefix):
            prefixes.append(clause.prefix)
    prefix_tuple = tuple(prefixes)

    def matches(token: Token) -> bool:
        return token.term in exact or bool(prefix_tuple and token.term.startswith(prefix_tuple))

    return matches


def _window(length: int, focus_start: int, focus_end: int, size: int) -> tuple[int, int]:
    if length <= size:
        return 0, length
    # Leave room for an ellipsis at each cut end.
    inner = size - 2
    centre = (focus_start + focus_end) // 2
    start = max(0, min(centre - inner // 2, length - inner))
    end = min(length, start + inner)
    if start == 0:
        end = min(length, size - 1)
    elif end == length:
        start = max(0, length - (size - 1))
    return start, end


def make_snippet(text: str, query: ParsedQuery, max_chars: int = MAX_SNIPPET_CHARS) -> Snippet:
    """At most `max_chars` characters of `text` around its first match, and the same with matches marked."""
    text = _SPACE.sub(" ", prepare(text[:MAX_SCANNED_CHARS])).strip()
    matches = _highlighter(query)
    # One lazy pass over the tokens: up to the first match, then on to the window's end; a tool result can be
    # megabytes long. The tokens read before the match are kept only as far back as a window can reach.
    stream = iter_tokens(text)
    before: deque[Token] = deque()
    focus = None
    for token in stream:
        while before and before[0].start < token.start - max_chars:
            before.popleft()
        before.append(token)
        if matches(token):
            focus = token
            break
    start, end = _window(len(text), focus.start if focus else 0, focus.end if focus else 0, max_chars)
    lead = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(text) else ""

    html_parts: list[str] = [lead]
    cursor = start
    for token in chain(before, stream) if focus else ():
        if token.start >= end:
            break
        if token.start < start or token.end > end or not matches(token):
            continue
        html_parts.append(escape(text[cursor : token.start]))
        html_parts.append(f"<mark>{escape(text[token.start : token.end])}</mark>")
        cursor = token.end
    html_parts.append(escape(text[cursor:end]))
    html_parts.append(tail)
    return Snippet(text=lead + text[start:end] + tail, html="".join(html_parts))
