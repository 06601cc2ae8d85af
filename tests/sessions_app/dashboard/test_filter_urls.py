"""A list filter URL or a search selects, for a queue, what its page lists and in the page's order: the list's own
form, score clauses and sorts (a score sort included), the tenant's conversations only, at most the limit asked."""

import pytest

from input_errors import RejectedInput
from sessions_app.dashboard.filter_urls import conversations_for, filter_params
from sessions_app.models import Conversation
from sessions_app.review import scores
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target
from tests.sessions_app.dashboard.conftest import ingest_plan, quiet_plan


@pytest.fixture
def scored(world):
    """conv-deploy scored 2, conv-quiet 5, conv-third unscored (and the newest)."""
    scores.define_score(world.acme, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="ada")
    scores.set_score(world.acme, world.deploy, Target(), "helpfulness", 2, author="user:ada")
    scores.set_score(world.acme, world.quiet, Target(), "helpfulness", 5, author="user:ada")
    ingest_plan(world.acme, quiet_plan(), "conv-third")
    return world


def _ids(tenant, source: str, limit: int = 500) -> list[str]:
    by_pk = dict(Conversation.objects.filter(tenant=tenant).values_list("pk", "external_id"))
    return [by_pk[pk] for pk in conversations_for(tenant, source, limit)]


def test_a_score_sort_fills_in_the_order_the_list_shows(scored):
    assert _ids(scored.acme, "/conversations/?q=sort:helpfulness") == ["conv-quiet", "conv-deploy", "conv-third"]
    assert _ids(scored.acme, "/conversations/?q=sort:helpfulness:asc") == ["conv-deploy", "conv-quiet", "conv-third"]


def test_score_clauses_and_filters_narrow_and_the_limit_cuts(scored):
    assert _ids(scored.acme, "/conversations/?q=score:helpfulness>=3") == ["conv-quiet"]
    assert _ids(scored.acme, "/conversations/?agent=weather_agent&sort=oldest") == ["conv-quiet", "conv-third"]
    assert len(_ids(scored.acme, "/conversations/", limit=2)) == 2


def test_only_the_tenants_own_conversations_are_selected(scored):
    assert "conv-globex" not in _ids(scored.acme, "/conversations/")
    assert _ids(scored.globex, "/conversations/") == ["conv-globex"]


@pytest.mark.parametrize(
    "source, params",
    [
        ("/conversations/?agent=a&q=score:x>=1", {"agent": "a", "q": "score:x>=1"}),
        ("  /search/?q=Krak%C3%B3w ", {"q": "Kraków"}),
        ("Kraków weather", {"q": "Kraków weather"}),
        ("/conversations", {"q": "/conversations"}),  # not the list's URL: searched as text
    ],
)
def test_a_source_reads_as_the_list_or_search_parameters(source, params):
    assert filter_params(source).dict() == params


@pytest.mark.parametrize("source", ["", "   ", "/search/", "/search/?role=user"])
def test_a_source_without_a_list_url_or_search_text_is_refused(source):
    with pytest.raises(RejectedInput, match="Give a list filter URL"):
        filter_params(source)
