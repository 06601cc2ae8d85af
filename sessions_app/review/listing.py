"""The conversation list's review part: score and label clauses narrowing its queryset, a score sort, and each
row's scores (one query per page)."""

from collections.abc import Callable, Sequence

from django.db.models import QuerySet

from sessions_app.dashboard.conversation_list import PAGE_SIZE
from sessions_app.models import Conversation, Tenant
from sessions_app.review import scores
from sessions_app.review.score_filters import ReviewQuery

type Narrowing = Callable[[QuerySet[Conversation]], QuerySet[Conversation]]


def narrowed(tenant: Tenant, review: ReviewQuery) -> Narrowing:
    """A function narrowing a list queryset by the query's clauses. Each score name is looked up now, so an
    unknown one is refused (RejectedInput) before anything is read."""
    for name in {clause.name for clause in review.scores} | ({review.sort} if review.sort else set()):
        scores.definition_named(tenant, name)
    if not review.narrows:
        return lambda qs: qs
    return lambda qs: scores.narrow_by_scores(qs, tenant, review)


def sorted_page(tenant: Tenant, qs: QuerySet[Conversation], review: ReviewQuery) -> list[Conversation]:
    """The first page in score order (a score sort has no further pages, as a ranked search has none)."""
    return list(scores.sorted_by_score(qs, tenant, review)[:PAGE_SIZE])


def row_scores(tenant: Tenant, conversations: Sequence[Conversation]) -> dict[int, list[scores.ShownScore]]:
    return scores.scores_of(tenant, [c.pk for c in conversations])
