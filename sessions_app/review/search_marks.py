"""The search page's review part: score and label clauses narrowing the hits a page shows, and the comments
matching the text (members only: the search page is a member's; agents and keys search transcripts through
search_app, which never reads comments)."""

from dataclasses import dataclass, field
from typing import Protocol

from sessions_app.models import Comment, Conversation, Tenant
from sessions_app.review import comments, scores
from sessions_app.review.score_filters import ReviewQuery
from sessions_app.tenancy.scoping import scoped

COMMENT_HITS = 5


@dataclass
class SearchMarks:
    notice: str = ""
    comments: list[Comment] = field(default_factory=list)


class HitGroup(Protocol):
    """What this reads of a page's group of hits (the dashboard's `search_access.HitGroup`)."""

    conversation_pk: int
    tenant: str  # the slug of the group's tenant, "" for the current one


class GroupedHits[G: HitGroup](Protocol):
    """A page of grouped hits (the dashboard's `search_access.SearchOutcome`): its groups are narrowed in place."""

    error: str
    groups: list[G]


def narrow_hits[G: HitGroup](tenant: Tenant, outcome: GroupedHits[G], review: ReviewQuery) -> str:
    """Keep the page's groups whose conversation (in this tenant) passes the clauses; the notice says the counts
    above are of the text alone, since the clauses narrow after ranking."""
    if not review.narrows or outcome.error:
        return ""
    pks = [group.conversation_pk for group in outcome.groups]
    narrowed = scores.narrow_by_scores(scoped(Conversation, tenant).filter(pk__in=pks), tenant, review)
    allowed = set(narrowed.values_list("pk", flat=True))
    before = len(outcome.groups)
    outcome.groups = [g for g in outcome.groups if g.conversation_pk in allowed and g.tenant in ("", tenant.slug)]
    return (
        f"Score and label filters kept {len(outcome.groups)} of the {before} conversations on this page; "
        "the counts are of the text alone."
    )


def comment_hits(tenant: Tenant, text: str) -> list[Comment]:
    return comments.search_comments(tenant, text)[:COMMENT_HITS]
