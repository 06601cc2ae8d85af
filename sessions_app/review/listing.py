"""The conversation list's review part: score and label clauses narrowing its queryset, a score sort, and each
row's scores (one query per page)."""

from collections.abc import Callable, Sequence

from django.db.models import QuerySet

from sessions_app.models import Conversation, Tenant
from sessions_app.review import scores
from sessions_app.review.score_filters import ReviewQuery

type Narrowing = Callable[[QuerySet[Conversation]], QuerySet[Conversation]]


def narrowed(tenant: Tenant, review: ReviewQuery) -> Narrowing:
    """A function narrowing a list queryset by the query's clauses; an unknown score name or a comparison its
    kind cannot make is refused (RejectedInput) here."""
    # Built once on no rows (no query runs) so every refusal comes now, before the page starts reading.
    scores.narrow_by_scores(Conversation.objects.none(), tenant, review)
    if review.sort:
        scores.sort_definition(tenant, review)
    if not review.narrows:
        return lambda qs: qs
    return lambda qs: scores.narrow_by_scores(qs, tenant, review)


def sorted_page(tenant: Tenant, qs: QuerySet[Conversation], review: ReviewQuery, size: int) -> list[Conversation]:
    """The first `size` rows in score order (a score sort has no further pages, as a ranked search has none)."""
    pks = scores.sorted_by_score(qs, tenant, review, size)
    by_pk = {c.pk: c for c in qs.filter(pk__in=pks)}
    return [by_pk[pk] for pk in pks]


def row_scores(tenant: Tenant, conversations: Sequence[Conversation]) -> dict[int, list[scores.ShownScore]]:
    return scores.scores_of(tenant, [c.pk for c in conversations])
