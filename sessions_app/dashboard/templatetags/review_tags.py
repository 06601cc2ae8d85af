"""Template filters of the review marks (issue 27)."""

from django import template

from sessions_app.review.scores import ShownScore

register = template.Library()


@register.filter
def scores_for(row_scores: dict[int, list[ShownScore]] | None, conversation_pk: int) -> list[ShownScore]:
    """One list row's scores from the page's `row_scores` (one query per page, not one per row)."""
    return (row_scores or {}).get(conversation_pk, [])
