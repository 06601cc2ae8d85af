"""`sort:NAME` orders conversations by their best value of the score (the highest; the lowest with `:asc`), ties
newest first, then the ones without a value, newest first; a page of `limit` is found by walking the values in
order, in as many steps as it takes (one author's many values on runs of one conversation count once)."""

import pytest

from sessions_app.models import Conversation
from sessions_app.review import scores
from sessions_app.review.score_filters import parse_review_query
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target
from tests.factories import make_tenant
from tests.sessions_app.dashboard.conftest import ingest_plan, quiet_plan

# conversation -> its values (on the conversation and on runs, by several authors); "e" has none.
VALUES = {"a": [2, 5], "b": [5], "c": [1, 3], "d": [3, 3, 3, 3, 3, 3, 3, 3], "e": []}


@pytest.fixture
def tenant(db):
    tenant = make_tenant("acme", "Acme")
    scores.define_score(tenant, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="t")
    for name, values in VALUES.items():  # created in this order: "e" is the newest
        conversation = ingest_plan(tenant, quiet_plan(), name)
        for n, value in enumerate(values):
            scores.set_score(tenant, conversation, Target(), "helpfulness", value, author=f"user:u{n}")
    return tenant


def _sorted(tenant, query: str, limit: int) -> list[str]:
    qs = Conversation.objects.filter(tenant=tenant)
    names = dict(qs.values_list("pk", "external_id"))
    return [names[pk] for pk in scores.sorted_by_score(qs, tenant, parse_review_query(query), limit)]


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 50])
def test_best_value_first_ties_newest_first_then_the_unscored(tenant, limit):
    assert _sorted(tenant, "sort:helpfulness", limit) == ["b", "a", "d", "c", "e"][:limit]
    assert _sorted(tenant, "sort:helpfulness:asc", limit) == ["c", "a", "d", "b", "e"][:limit]


def test_only_the_narrowed_conversations_are_sorted(tenant):
    qs = Conversation.objects.filter(tenant=tenant, external_id__in=["a", "c", "e"])
    pks = scores.sorted_by_score(qs, tenant, parse_review_query("sort:helpfulness"), 50)
    assert [Conversation.objects.get(pk=pk).external_id for pk in pks] == ["a", "c", "e"]


@pytest.mark.parametrize("limit", [4, 5, 50])
def test_a_walk_that_reads_too_few_conversations_groups_the_narrowed_ones_instead(tenant, monkeypatch, limit):
    """One value read per row of the page: "d"'s eight values fill the read before a page is found, so the
    best values are grouped over the conversations instead, in the same order."""
    monkeypatch.setattr(scores, "WALK_ROWS_PER_ROW", 1)
    assert _sorted(tenant, "sort:helpfulness", limit) == ["b", "a", "d", "c", "e"][:limit]
    assert _sorted(tenant, "sort:helpfulness:asc", limit) == ["c", "a", "d", "b", "e"][:limit]
