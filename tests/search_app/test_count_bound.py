"""Counts that cost what the page costs: exact up to the count bound, past it a lower bound that says it is one,
with the pages still walking the whole exact ranking (every ranker, folded or in the tail)."""

import pytest

from search_app import folding
from search_app.service import run_search
from tests.search_app.test_counts_and_paging import QUERIES, brute_force, corpus, every_page  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ranking")]

BOUND = 12


@pytest.fixture(params=["tail", "blocks"])
def bounded_corpus(request, settings, tenant, corpus):  # noqa: F811
    settings.SESSIONDESK_SEARCH_COUNT_BOUND = BOUND
    if request.param == "blocks":
        folding.fold_tenant(tenant.id)
    return request.param


@pytest.mark.parametrize("query", [*QUERIES, "w0 w1", "w0 -w150", "w3 w4 w5 -w1"])
def test_past_the_bound_the_totals_are_lower_bounds_and_the_pages_stay_exact(tenant, bounded_corpus, query):
    expected = brute_force(tenant, query)
    conversations = {conversation for _, _, conversation in expected}
    pages = every_page(tenant, query, limit=5)
    for page in pages:
        if page.total_is_lower_bound:
            assert len(expected) > BOUND
            assert page.total_matches == BOUND
            assert 1 <= page.total_conversations <= len(conversations)
        else:
            assert (page.total_matches, page.total_conversations) == (len(expected), len(conversations))
    walked = [(hit.entry_id, hit.score) for page in pages for hit in page.results]
    assert [entry for entry, _ in walked] == [entry for entry, _, _ in expected]
    for (_, ours), (_, theirs, _) in zip(walked, expected, strict=True):
        assert ours == pytest.approx(theirs, rel=1e-9)


def test_a_common_word_is_counted_as_a_lower_bound_and_a_rare_one_exactly(tenant, bounded_corpus):
    common = run_search(tenant=tenant, query="w0", scope="tenant")
    assert (common.total_matches, common.total_is_lower_bound) == (BOUND, True)
    assert common.as_dict()["total_is_lower_bound"] is True
    rare = run_search(tenant=tenant, query="数据库", scope="tenant")
    assert not rare.total_is_lower_bound and rare.total_matches == len(brute_force(tenant, "数据库")) > 0


def test_one_conversation_is_counted_exactly_past_the_bound(tenant, bounded_corpus):
    response = run_search(tenant=tenant, query="w0", conversation_id="c1")
    assert not response.total_is_lower_bound
