"""What a search query asks that the search reads differently from what its writer may mean. Pure.

The parser takes every query it can (an unclosed quote is a phrase to the end, AND is a word), so a query that
looks like another engine's syntax got an answer with no word of why; these notes say it beside the results.
"""

import re

# Operators of other engines' syntaxes, written as their users write them (upper case, or the C symbols).
_BOOLEAN_OPERATORS = frozenset({"AND", "OR", "NOT", "&&", "||"})
_CHUNKS = re.compile(r'"[^"]*"?|\S+')


def query_notes(query: str) -> list[str]:
    """Plain sentences about `query` (none for a query the search reads as its writer likely means)."""
    notes = []
    if query.count('"') % 2:
        notes.append('A quote is not closed: the words after it were searched as one phrase. Close it with a second ".')
    operators = sorted({chunk for chunk in _CHUNKS.findall(query) if chunk in _BOOLEAN_OPERATORS})
    if operators:
        named = ", ".join(operators)
        notes.append(
            f"{named} {'is not an operator' if len(operators) == 1 else 'are not operators'} here: a message matching "
            'any of the words is found, best first. Leave a word out with -word; keep words together with "a phrase".'
        )
    return notes
