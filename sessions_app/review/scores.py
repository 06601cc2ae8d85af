"""Score definitions and scores: the one place they are written, each write with its audit event, and the list's
score filters and sort as narrowing querysets."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, Min, OuterRef, Q, QuerySet
from django.utils import timezone

from input_errors import RejectedInput
from sessions_app.audit.events import record_event
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import Conversation, Run, Score, ScoreDefinition, Tenant, TranscriptEntry
from sessions_app.review.score_filters import ReviewQuery, ScoreClause
from sessions_app.review.score_values import ScoreKind, ScoreShape, ScoreValue, check_shape, parse_value
from sessions_app.review.targets import Target
from sessions_app.tenancy.scoping import scoped


def define_score(tenant: Tenant, shape: ScoreShape, *, actor: str) -> ScoreDefinition:
    check_shape(shape)
    numeric = shape.kind is ScoreKind.NUMERIC
    try:
        with transaction.atomic():
            definition = ScoreDefinition.objects.create(
                tenant=tenant,
                name=shape.name,
                kind=shape.kind.value,
                minimum=shape.minimum if numeric else None,
                maximum=shape.maximum if numeric else None,
                categories=list(shape.categories) if shape.kind is ScoreKind.CATEGORICAL else [],
            )
            record_event(tenant, EventClass.SCORE_DEFINED, actor=actor)
    except IntegrityError:
        raise RejectedInput(f"A score named {shape.name!r} already exists.", status=409) from None
    return definition


def definitions(tenant: Tenant) -> list[ScoreDefinition]:
    return list(scoped(ScoreDefinition, tenant).order_by("name"))


def definition_named(tenant: Tenant, name: str) -> ScoreDefinition:
    definition = scoped(ScoreDefinition, tenant).filter(name=name).first()
    if definition is None:
        raise RejectedInput(f"No score named {name!r} in this tenant (an admin defines score names).", status=404)
    return definition


def check_target(tenant: Tenant, conversation: Conversation, target: Target) -> None:
    """A run or message of this conversation, else 404 as for one that does not exist."""
    if target.run_id and not scoped(Run, tenant).filter(conversation=conversation, run_id=target.run_id).exists():
        raise RejectedInput(f"No run {target.run_id!r} in conversation {conversation.external_id!r}.", status=404)
    if target.position is not None and not (
        scoped(TranscriptEntry, tenant).filter(conversation=conversation, position=target.position).exists()
    ):
        raise RejectedInput(f"No message at position {target.position} in this conversation.", status=404)


def set_score(
    tenant: Tenant,
    conversation: Conversation,
    target: Target,
    name: str,
    raw_value: str | float | bool,
    *,
    author: str,
) -> Score:
    """Set (or replace) `author`'s score `name` on `target`; refused input changes nothing."""
    definition = definition_named(tenant, name)
    value = parse_value(definition.shape, raw_value)
    check_target(tenant, conversation, target)
    key = {"definition": definition, "conversation": conversation, "target": target.key, "author": author}
    with transaction.atomic():
        # Updated through the tenant's rows (not by id alone: one partition, one Citus shard), else inserted; a
        # concurrent insert of the same key loses to the unique key and updates instead.
        mine = scoped(Score, tenant).filter(**key)
        if not mine.update(number=value.number, text=value.text, updated_at=timezone.now()):
            try:
                with transaction.atomic():
                    Score.objects.create(tenant=tenant, number=value.number, text=value.text, **key)
            except IntegrityError:
                mine.update(number=value.number, text=value.text, updated_at=timezone.now())
        score = mine.get()
        record_event(
            tenant,
            EventClass.SCORE_SET,
            actor=author,
            conversation_id=conversation.external_id,
            run_id=target.run_id,
        )
    return score


@dataclass(frozen=True)
class ShownScore:
    name: str
    value: str
    target: str
    author: str


def scores_of(tenant: Tenant, conversation_ids: Sequence[int]) -> dict[int, list[ShownScore]]:
    """Each conversation's scores, for one page of the list or one conversation (one query)."""
    shown: dict[int, list[ShownScore]] = {pk: [] for pk in conversation_ids}
    rows = (
        scoped(Score, tenant)
        # The tenant named on the joined table too: one partition (one Citus shard) per table read.
        .filter(conversation_id__in=list(conversation_ids), definition__tenant=tenant)
        .select_related("definition")
        .order_by("definition__name", "target", "author")
    )
    for score in rows:
        kind = ScoreKind(score.definition.kind)
        value = ScoreValue(score.number, score.text).shown(kind)
        shown[score.conversation_id].append(ShownScore(score.definition.name, value, score.target, score.author))
    return shown


_COMPARE = {">=": "gte", "<=": "lte", ">": "gt", "<": "lt"}


def _clause_scores(tenant: Tenant, clause: ScoreClause) -> QuerySet[Score]:
    definition = definition_named(tenant, clause.name)
    scores = scoped(Score, tenant).filter(definition=definition, conversation=OuterRef("pk"))
    if not clause.operator:
        return scores
    kind = ScoreKind(definition.kind)
    if clause.operator in _COMPARE:
        if kind is not ScoreKind.NUMERIC:
            raise RejectedInput(f"score:{clause.name} is {kind.value}: compare it with = or !=.")
        return scores.filter(**{f"number__{_COMPARE[clause.operator]}": clause.number})
    value = parse_value(definition.shape, clause.value)
    match = Q(number=value.number) if kind is not ScoreKind.CATEGORICAL else Q(text=value.text)
    return scores.filter(match) if clause.operator == "=" else scores.exclude(match)


def _label_scores(tenant: Tenant, label: str) -> QuerySet[Score]:
    """A label is a boolean score of that name set to yes, or a categorical score holding that category. The
    definitions it can be are picked first (a tenant has a handful), so the database reads only their rows."""
    match = Q()
    for definition in definitions(tenant):
        if definition.kind == ScoreKind.BOOLEAN and definition.name == label:
            match |= Q(definition=definition, number=1.0)
        elif definition.kind == ScoreKind.CATEGORICAL and label in definition.categories:
            match |= Q(definition=definition, text=label)
    if not match:
        return scoped(Score, tenant).none()
    return scoped(Score, tenant).filter(match, conversation=OuterRef("pk"))


def narrow_by_scores(qs: QuerySet[Conversation], tenant: Tenant, query: ReviewQuery) -> QuerySet[Conversation]:
    """`qs` narrowed by the query's score and label clauses (each only narrows; an unknown score name is a 404)."""
    for clause in query.scores:
        qs = qs.filter(Exists(_clause_scores(tenant, clause)))
    for label in query.labels:
        qs = qs.filter(Exists(_label_scores(tenant, label)))
    return qs


def sort_definition(tenant: Tenant, query: ReviewQuery) -> ScoreDefinition:
    """The definition the query sorts by; refused when it does not exist or cannot be ordered."""
    definition = definition_named(tenant, query.sort)
    if definition.kind == ScoreKind.CATEGORICAL:
        raise RejectedInput(f"sort:{query.sort} is categorical; sort by a numeric or boolean score.")
    return definition


WALK_ROWS_PER_ROW = 8
"""How many of the score's values the walk reads per row of the page before it gives up on walking: past that
the other filters pass so few conversations that starting from them is cheaper (bench/review.py)."""


def sorted_by_score(qs: QuerySet[Conversation], tenant: Tenant, query: ReviewQuery, limit: int) -> list[int]:
    """The pks of `qs`'s first `limit` conversations in the order of their best value of the query's sort score
    (the highest; the lowest with `:asc`), ties newest first, then those without one, newest first.

    Two ways, the cheaper first. The score's values are walked in order on the (tenant, definition, number)
    index, one read of `WALK_ROWS_PER_ROW` values per row of the page: when most conversations pass the other
    filters that finds a page at once, so the cost follows the page, not the tenant's history (a correlated
    subquery giving every conversation its best value cost 45 ms at 2,500 conversations). When the read is full
    but holds less than a page, the filters are narrow: then the best values are grouped over the conversations
    that pass them (`qs` first), whose cost follows how many pass, not the walk's length (walking on in steps
    re-read every earlier step: 21,255 pages, 15 ms, for 4% passing at 5,000 runs)."""
    definition = sort_definition(tenant, query)
    values = scoped(Score, tenant).filter(definition=definition, number__isnull=False)
    mine = values.filter(conversation__in=qs.values("pk"))
    direction = "number" if query.sort_ascending else "-number"
    chunk = limit * WALK_ROWS_PER_ROW
    rows = list(mine.order_by(direction, "-conversation_id").values_list("conversation_id", flat=True)[:chunk])
    # insertion-ordered: a conversation's first row in the walk holds its best value
    pks = list(dict.fromkeys(rows))[:limit]
    if len(pks) < limit and len(rows) == chunk:
        best = Min("number") if query.sort_ascending else Max("number")
        grouped = (
            mine.values("conversation_id")
            .annotate(best=best)
            .order_by("best" if query.sort_ascending else "-best", "-conversation_id")
        )
        pks = list(grouped.values_list("conversation_id", flat=True)[:limit])
    if len(pks) < limit:  # fewer scored than a page: the rest have no value, newest first
        unscored = qs.exclude(Exists(values.filter(conversation=OuterRef("pk")))).order_by("-pk")
        pks += unscored.values_list("pk", flat=True)[: limit - len(pks)]
    return pks
