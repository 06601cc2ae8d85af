"""The query parameters of GET /api/v1/search and GET /api/v1/conversations/<id>/messages, declared once.

The views validate with these models and the OpenAPI document (`sessions_app.api.openapi`) is generated from them,
so the limits, read from search's own constants, cannot drift. A refused parameter is a `SearchError` (400) naming
it. An empty value counts as absent, as it always has (`?limit=` is the default limit), except for `cursor`, which
is given or not.
"""

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

from annotated_types import Ge, Le
from django.http import QueryDict
from django.utils.dateparse import parse_datetime
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from search_app.context import MAX_CONTEXT_SIDE
from search_app.errors import SearchError
from search_app.paging import INVALID, MAX_CURSOR_CHARS
from search_app.query import MAX_PREFIXES, MAX_QUERY_CHARS
from search_app.validation import DEFAULT_LIMIT, MAX_LIMIT
from sessions_app.core.api_input import out_of_range_problem
from sessions_app.models import MessageRole

API_SCOPES = ("conversation", "run", "tenant")
_ROLE = f"(?:{'|'.join(MessageRole.values)})"
ROLES_PATTERN = f"^(?:{_ROLE}(?:,{_ROLE})*)?(?![\\s\\S])"
_MAX_DIGITS = 12  # longer text is no count or position: refused before int() reads it
MAX_POSITION = 2**31 - 1  # a transcript position is a 32-bit integer column

SEARCH_SYNTAX = (
    'Words (any; rarer words weigh more), "a phrase", -word or -"phrase" to exclude, prefix* (two characters or '
    f"more; at most {MAX_PREFIXES} distinct prefixes a query, 400 past that). Filters narrow without scoring: "
    "conversation:ID, run:ID, agent:NAME, tool:NAME (exact tool name), "
    'role:ROLE (repeatable: any of them); quote a value with spaces (agent:"release bot"); a filter that '
    "disagrees with conversation_id, run_id, agent or role is a 400. A query that is exactly a conversation, run or "
    "tool-call id also answers it in `identified`, before `results`. Masked values (credentials, the tenant's "
    "redaction patterns) are never matched."
)
SEARCH_PAGING = (
    "The `next_cursor` of the previous page of the same search (same q, scope and filters). The answer counts every "
    "match (`total_matches` messages in `total_conversations` conversations) and the pages walk one ranking, score "
    "then id, as the index stood at the first page. A changed cursor, or one of another search, is a 400."
)


def _whole_number(value: object) -> object:
    if isinstance(value, str):
        if len(value) > _MAX_DIGITS:
            raise ValueError("too long for a whole number")
        return int(value)
    return value


def _parsed_time(value: str) -> datetime | None:
    # Django's ISO 8601 reading, as before the models: pydantic's would also take a bare number of seconds.
    try:
        parsed = parse_datetime(value)
    except ValueError:  # well formed but no such date, such as month 13
        return None
    return parsed if parsed is not None and parsed.tzinfo is not None else None


def _aware_time(value: object) -> object:
    if isinstance(value, str):
        parsed = _parsed_time(value)
        if parsed is None:
            raise ValueError("not an ISO 8601 time with a timezone")
        if problem := out_of_range_problem(parsed):
            raise ValueError(problem)
        # In UTC: PostgreSQL holds offsets up to ±15:59 only, and Python (and RFC 3339) up to ±23:59.
        return parsed.astimezone(UTC)
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole_number)]
AwareTime = Annotated[datetime, BeforeValidator(_aware_time)]


def _shown(raw: object) -> str:
    """The refused value as the message shows it: a number as itself, text quoted and cut."""
    try:
        return str(int(str(raw))) if len(str(raw)) <= _MAX_DIGITS else repr(str(raw)[:40])
    except ValueError:
        return repr(str(raw)[:40])


def whole_number_problem(name: str, field: FieldInfo, raw: object) -> str:
    low = next((m.ge for m in field.metadata if isinstance(m, Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, Le)), None)
    span = f"from {low}" + (f" to {high}" if high is not None else "")
    return f"'{name}' must be a whole number {span}, got {_shown(raw)}."


def time_problem(name: str, field: FieldInfo, raw: object) -> str:
    parsed = _parsed_time(raw) if isinstance(raw, str) else None
    if parsed is not None and (range_problem := out_of_range_problem(parsed)):
        return f"'{name}' {range_problem}, got {str(raw)[:40]!r}."
    return f"'{name}' must be an ISO 8601 time with a timezone, got {str(raw)[:40]!r}."


type Problem = Callable[[str, FieldInfo, object], str]


class _Params(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    # How a refused value of each parameter is worded (one not named here cannot be refused by the model).
    PROBLEMS: ClassVar[Mapping[str, Problem]] = {}
    LISTS: ClassVar[tuple[str, ...]] = ()  # repeatable, each value also comma-separated
    KEEP_EMPTY: ClassVar[tuple[str, ...]] = ()


class SearchParams(_Params):
    """GET /api/v1/search; the fields are `run_search`'s arguments, the aliases the parameters."""

    query: str = Field("", alias="q", max_length=MAX_QUERY_CHARS, description=SEARCH_SYNTAX)
    scope: Literal["conversation", "run", "tenant"] = "conversation"
    conversation_id: str | None = None
    run_id: str | None = None
    agent: str | None = None
    roles: list[str] = Field(
        default_factory=list,
        alias="role",
        description="Repeatable, or comma-separated: any of them",
        json_schema_extra={"items": {"type": "string", "pattern": ROLES_PATTERN}},
    )
    since: AwareTime | None = None
    until: AwareTime | None = None
    limit: WholeNumber = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    cursor: str | None = Field(None, min_length=1, max_length=MAX_CURSOR_CHARS, description=SEARCH_PAGING)

    PROBLEMS = {
        "q": lambda name, field, raw: f"The query is {len(str(raw))} characters long; the limit is {MAX_QUERY_CHARS}.",
        "scope": lambda name, field, raw: f"Unknown scope {raw!r} for an API key: use one of {', '.join(API_SCOPES)}.",
        "since": time_problem,
        "until": time_problem,
        "limit": whole_number_problem,
        "cursor": lambda name, field, raw: INVALID,
    }
    LISTS = ("role",)
    KEEP_EMPTY = ("cursor",)  # an empty cursor is a bad cursor, not the first page


class ContextParams(_Params):
    """GET /api/v1/conversations/<conversation_id>/messages; the fields are `read_context`'s arguments."""

    position: WholeNumber = Field(
        alias="around", ge=0, le=MAX_POSITION, description="The transcript position to read around"
    )
    before: WholeNumber = Field(5, ge=0, le=MAX_CONTEXT_SIDE)
    after: WholeNumber = Field(5, ge=0, le=MAX_CONTEXT_SIDE)
    run_id: str | None = None

    PROBLEMS = {"around": whole_number_problem, "before": whole_number_problem, "after": whole_number_problem}


def parse_params[M: _Params](model: type[M], query: QueryDict) -> M:
    """`query` as a `model`, or `SearchError` naming the first parameter that is wrong."""
    fields = {field.alias or name: field for name, field in model.model_fields.items()}
    data: dict[str, object] = {}
    for name in fields:
        if name in model.LISTS:
            values = [value for raw in query.getlist(name) for value in raw.split(",") if value]
            if values:
                data[name] = values
        elif (raw := query.get(name)) is not None and (raw != "" or name in model.KEEP_EMPTY):
            data[name] = raw
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        name = str(first["loc"][0])
        if first["type"] == "missing":
            description = fields[name].description or ""
            raise SearchError(f"'{name}' is required: {description[:1].lower()}{description[1:]}.") from None
        problem = model.PROBLEMS.get(name)
        if problem is None:  # a field the model cannot refuse: a bug, not the caller's mistake
            raise
        raise SearchError(problem(name, fields[name], data[name])) from None
