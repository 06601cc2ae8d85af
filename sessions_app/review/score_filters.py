"""The review clauses of a list or search query: `score:NAME>=4`, `score:NAME` (has one), `label:NAME`,
`sort:NAME` / `sort:NAME:asc`. Pure.

They are taken out of the query before the rest goes to ranked search, whose syntax does not know them. A clause
that looks like one but cannot be read (`score:x>>4`, `score:` alone) is refused with the reason, rather than
searched for as words.
"""

import math
import re
import shlex
from dataclasses import dataclass

from input_errors import RejectedInput
from sessions_app.review.score_values import NAME_PATTERN

OPERATORS = (">=", "<=", "!=", ">", "<", "=")
_SCORE = re.compile(r"^(?P<name>[^<>=!]+)(?:(?P<op>>=|<=|!=|>|<|=)(?P<value>.+))?$")
MAX_CLAUSES = 8


@dataclass(frozen=True)
class ScoreClause:
    name: str
    operator: str = ""  # "" = the conversation has such a score at all
    value: str = ""

    @property
    def number(self) -> float | None:
        try:
            number = float(self.value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None


@dataclass(frozen=True)
class ReviewQuery:
    text: str  # what is left for ranked search
    scores: tuple[ScoreClause, ...] = ()
    labels: tuple[str, ...] = ()
    sort: str = ""
    sort_ascending: bool = False

    @property
    def narrows(self) -> bool:
        return bool(self.scores or self.labels)


def _name(value: str, what: str) -> str:
    if not NAME_PATTERN.match(value):
        raise RejectedInput(f"{what} {value!r} is not a score name (lowercase letters, digits, '_' or '-').")
    return value


def _score_clause(body: str) -> ScoreClause:
    match = _SCORE.match(body)
    if not match:
        raise RejectedInput(f"Cannot read score:{body} (write score:NAME>=4, score:NAME=yes or score:NAME).")
    name = _name(match["name"], "score:")
    if match["op"] is None:
        return ScoreClause(name)
    value = match["value"]
    if any(value.startswith(op[0]) for op in OPERATORS):
        raise RejectedInput(f"Cannot read score:{body} (one comparison, then a value).")
    clause = ScoreClause(name, match["op"], value)
    if clause.operator in (">=", "<=", ">", "<") and clause.number is None:
        raise RejectedInput(f"score:{body} compares with {value!r}, which is not a number.")
    return clause


def parse_review_query(query: str) -> ReviewQuery:
    """Split `query` into its review clauses and the text left for search."""
    try:
        words = shlex.split(query)
    except ValueError:
        words = query.split()  # an unbalanced quote is search's to judge; review clauses hold no quotes
    scores: list[ScoreClause] = []
    labels: list[str] = []
    sort, ascending, rest = "", False, []
    for word in words:
        head, _, body = word.partition(":")
        lowered = head.lower()
        if lowered == "score" and body:
            scores.append(_score_clause(body))
        elif lowered == "label" and body:
            labels.append(_name(body, "label:"))
        elif lowered == "sort" and body:
            name, _, direction = body.partition(":")
            if direction not in ("", "asc", "desc"):
                raise RejectedInput(f"sort:{body} sorts by a score, then :asc or :desc.")
            sort, ascending = _name(name, "sort:"), direction == "asc"
        elif lowered in ("score", "label", "sort"):
            raise RejectedInput(f"{word} names nothing (write {lowered}:NAME).")
        else:
            rest.append(word)
    if len(scores) + len(labels) > MAX_CLAUSES:
        raise RejectedInput(f"At most {MAX_CLAUSES} score and label clauses.")
    # Unchanged when nothing was taken out, so search sees exactly what was typed.
    text = " ".join(f'"{w}"' if " " in w else w for w in rest) if len(rest) != len(words) else query.strip()
    return ReviewQuery(text, tuple(scores), tuple(labels), sort, ascending)
