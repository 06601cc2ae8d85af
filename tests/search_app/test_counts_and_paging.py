"""Honest counts and paging: every response counts all matching messages and conversations exactly, and its cursor
walks the whole ranking (score descending, then id) page by page, with nothing repeated or skipped."""

import random

import pytest

from search_app import bm25, paging
from search_app.errors import SearchError
from search_app.models import SearchDocument
from search_app.query import parse_query
from search_app.ranking import bm25_params
from search_app.service import run_search
from search_app.validation import MAX_LIMIT
from sessions_app.models import Conversation
from tests.search_app.factories import add_messages, assistant, make_conversation, make_run
from tests.search_app.test_bm25_matches_reference import zipf_texts

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ranking")]

QUERIES = [
    "w0",
    "w7 w120",
    '"w0 w1"',
    "w1*",
    "w0 -w1",
    'w3 -"w0 w1"',
    "w2 -w4*",
    "数据",
    '"数据库"',
    "w9 数据",
    "nothingmatches",
]


@pytest.fixture
def corpus(tenant, other_tenant):
    texts = zipf_texts(150, seed=5)
    rng = random.Random(5)
    for number in range(5):
        run = make_run(make_conversation(tenant, f"c{number}"), f"r{number}")
        chunk = texts[number * 25 : (number + 1) * 25]
        messages = [assistant(text) if i % 3 == 0 else text for i, text in enumerate(chunk)]
        if number % 2:
            messages.append(assistant(f"数据库 {rng.choice(texts)}"))
            messages.append(f"数据 库 {rng.choice(texts)}")
        add_messages(run, messages)
    add_messages(make_run(make_conversation(other_tenant, "x"), "rx"), texts[125:])


def brute_force(tenant, query, roles=()):
    """The full ranking of the tenant's documents by search_app.bm25, as (entry id, score, conversation pk)."""
    rows = list(
        SearchDocument.objects.filter(tenant=tenant).values_list("id", "terms", "role", "entry_id", "conversation_id")
    )
    documents = [bm25.Document(key, terms, not roles or role in roles) for key, terms, role, _, _ in rows]
    stats = bm25.ScopeStats(len(documents), sum(d.length or 0 for d in documents))
    meta = {key: (entry, conversation) for key, _, _, entry, conversation in rows}
    ranked = bm25.rank(parse_query(query), documents, stats, bm25_params())
    return [(meta[key][0], score, meta[key][1]) for key, score in ranked]


def every_page(tenant, query, limit, **options):
    pages, cursor = [], None
    while True:
        response = run_search(tenant=tenant, query=query, scope="tenant", limit=limit, cursor=cursor, **options)
        pages.append(response)
        cursor = response.next_cursor
        if cursor is None:
            return pages
        assert len(pages) < 100


@pytest.mark.parametrize("query", QUERIES)
def test_counts_are_exact_and_pages_walk_the_whole_ranking(tenant, corpus, query):
    expected = brute_force(tenant, query)
    pages = every_page(tenant, query, limit=7)
    for page in pages:
        assert page.total_matches == len(expected)
        assert page.total_conversations == len({conversation for _, _, conversation in expected})
    walked = [(hit.entry_id, hit.score) for page in pages for hit in page.results]
    assert [entry for entry, _ in walked] == [entry for entry, _, _ in expected]
    for (_, ours), (_, theirs, _) in zip(walked, expected, strict=True):
        assert ours == pytest.approx(theirs, rel=1e-9)
    assert [page.offset for page in pages] == [7 * n for n in range(len(pages))]


def test_counts_follow_filters(tenant, corpus):
    expected = brute_force(tenant, "w0", roles=("assistant",))
    response = run_search(tenant=tenant, query="w0", scope="tenant", roles=["assistant"])
    assert response.total_matches == len(expected) > 0
    assert response.total_conversations == len({c for _, _, c in expected})
    assert {hit.role for hit in response.results} == {"assistant"}


def test_one_conversation_counts_its_own_matches(tenant, corpus):
    response = run_search(tenant=tenant, query="w0", conversation_id="c1", limit=MAX_LIMIT)
    pk = Conversation.objects.get(tenant=tenant, external_id="c1").pk
    assert response.total_matches == len([1 for _, _, c in brute_force(tenant, "w0") if c == pk]) > 0
    assert response.total_conversations == 1


def test_the_last_page_has_no_cursor_and_a_search_with_no_match_counts_zero(tenant, corpus):
    response = run_search(tenant=tenant, query="nothingmatches", scope="tenant")
    assert (response.total_matches, response.total_conversations, response.next_cursor) == (0, 0, None)
    everything = run_search(tenant=tenant, query="数据", scope="tenant", limit=MAX_LIMIT)
    assert everything.next_cursor is None and len(everything.results) == everything.total_matches


def test_messages_arriving_between_pages_never_repeat_a_result(tenant, corpus):
    brute_force_before = brute_force(tenant, "w0")
    first = run_search(tenant=tenant, query="w0", scope="tenant", limit=5)
    # A new best match arrives: the next page still starts after the last result shown.
    add_messages(make_run(Conversation.objects.get(tenant=tenant, external_id="c0"), "late"), ["w0 " * 30])
    second = run_search(tenant=tenant, query="w0", scope="tenant", limit=5, cursor=first.next_cursor)
    # Later pages see the index as the first did: the same scores, the same counts, the ranking continued.
    expected = [entry for entry, _, _ in brute_force_before]
    assert [hit.entry_id for hit in first.results + second.results] == expected[:10]
    assert second.total_matches == first.total_matches == len(expected)
    # Asked again, the search finds the new message first.
    again = run_search(tenant=tenant, query="w0", scope="tenant", limit=5)
    assert again.total_matches == first.total_matches + 1 and again.results[0].entry_id not in expected


def test_a_changed_cursor_is_refused_naming_the_problem(tenant, corpus):
    cursor = run_search(tenant=tenant, query="w0", scope="tenant", limit=5).next_cursor
    assert cursor
    for tampered in (cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB"), "x" + cursor, "garbage", "", "a" * 600):
        with pytest.raises(SearchError, match="cursor is not valid"):
            run_search(tenant=tenant, query="w0", scope="tenant", limit=5, cursor=tampered)


def test_a_cursor_continues_only_its_own_search(tenant, corpus):
    cursor = run_search(tenant=tenant, query="w0", scope="tenant", limit=5).next_cursor
    for other in ({"query": "w1"}, {"query": "w0", "roles": ["user"]}, {"query": "w0", "scope": "conversation"}):
        options = {"query": "w0", "scope": "tenant", **other}
        if options["scope"] == "conversation":
            options["conversation_id"] = "c0"
        with pytest.raises(SearchError, match="different search"):
            run_search(tenant=tenant, limit=5, cursor=cursor, **options)


def test_paging_stops_at_its_depth(tenant, corpus, monkeypatch):
    monkeypatch.setattr(paging, "MAX_DEPTH", 10)
    response = run_search(tenant=tenant, query="w0", scope="tenant", limit=5)
    second = run_search(tenant=tenant, query="w0", scope="tenant", limit=5, cursor=response.next_cursor)
    assert second.next_cursor is None and second.total_matches > 10
    deep = paging.encode(
        paging.PageCursor(10, 0.5, 1, 10**9, 100, 1000),
        paging.fingerprint(
            query="w0",
            scope="tenant",
            conversation_id=None,
            run_id=None,
            roles=(),
            agent=None,
            since=None,
            until=None,
            tenant_ids=(tenant.id,),
        ),
    )
    with pytest.raises(SearchError, match="Paging stops after the first 10 results"):
        run_search(tenant=tenant, query="w0", scope="tenant", limit=5, cursor=deep)
