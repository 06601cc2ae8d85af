"""Caps: result count, snippet length, response size, query length; bad input changes nothing."""

import json

import pytest

from search_app.errors import SearchError
from search_app.models import ConversationIndex, SearchDocument
from search_app.results import MAX_RESPONSE_BYTES
from search_app.service import run_search
from sessions_app.models import TranscriptEntry
from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def many(tenant):
    run = make_run(make_conversation(tenant, "many"), "run-many")
    add_messages(run, [f"gannet {i} " + "word " * i for i in range(30)])


def count(tenant, **options):
    return len(run_search(tenant=tenant, query="gannet", conversation_id="many", **options).results)


def test_ten_results_by_default(tenant, many):
    assert count(tenant) == 10


def test_at_most_twenty_five_results(tenant, many):
    assert count(tenant, limit=25) == 25
    for bad in (0, 26, -1, "5", True):
        with pytest.raises(SearchError, match="limit must be a whole number from 1 to 25"):
            count(tenant, limit=bad)


def test_snippets_are_at_most_300_characters(tenant):
    run = make_run(make_conversation(tenant, "long"), "run-long")
    add_messages(run, ["lorem " * 500 + "kestrel " + "ipsum " * 500])
    (hit,) = run_search(tenant=tenant, query="kestrel", conversation_id="long").results
    assert len(hit.snippet) <= 300
    assert "kestrel" in hit.snippet


def test_a_response_over_32_kib_is_cut_and_says_truncated(tenant):
    run = make_run(make_conversation(tenant, "big"), "run-big")
    # Escaping makes each snippet's HTML four times its text: 25 of them exceed the cap.
    add_messages(run, ["<" * 200 + f" gannet {i} " + "<" * 200 for i in range(25)])
    response = run_search(tenant=tenant, query="gannet", conversation_id="big", limit=25)
    encoded = json.dumps(response.as_dict(), ensure_ascii=False).encode()
    assert response.truncated is True
    assert len(encoded) <= MAX_RESPONSE_BYTES
    assert 0 < len(response.results) < 25


def test_a_response_within_the_cap_is_not_truncated(tenant, many):
    assert run_search(tenant=tenant, query="gannet", conversation_id="many").truncated is False


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("", "The query is empty"),
        ("   ", "The query is empty"),
        ("x" * 4097, "4097 characters long; the limit is 4096"),
    ],
)
def test_bad_queries_are_rejected_with_the_problem_named_and_change_nothing(tenant, many, query, problem):
    before = (SearchDocument.objects.count(), ConversationIndex.objects.count(), TranscriptEntry.objects.count())
    with pytest.raises(SearchError, match=problem):
        run_search(tenant=tenant, query=query, conversation_id="many")
    after = (SearchDocument.objects.count(), ConversationIndex.objects.count(), TranscriptEntry.objects.count())
    assert before == after


def test_a_query_of_exactly_4096_characters_is_searched(tenant, many):
    assert run_search(tenant=tenant, query=("gannet " * 600)[:4096], conversation_id="many").results
