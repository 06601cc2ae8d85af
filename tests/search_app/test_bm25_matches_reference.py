"""BM25 ranking equals an independent reference (same tokens): same top 10, scores within 1e-6."""

import random

import pytest
from django.test import override_settings

from search_app import bm25
from search_app.query import parse_query
from search_app.service import run_search
from search_app.tokenize import index_terms
from tests.search_app.factories import add_messages, make_conversation, make_run
from tests.search_app.reference_bm25 import reference_rank

VOCABULARY = [f"w{i}" for i in range(300)]
DB_QUERIES = ["w0", "w1 w2 w250", "w42 w7 w100 w200"]
QUERIES = ["w0", "w3", "w17 w150", "w1 w2 w250", "w299", "w5 w5 w8", "w42 w7 w100 w200"]


def zipf_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
    return [" ".join(rng.choices(VOCABULARY, weights, k=rng.randint(3, 60))) for _ in range(count)]


def assert_same_ranking(ours, reference):
    assert [key for key, _ in ours[:10]] == [key for key, _ in reference[:10]]
    for (_, a), (_, b) in zip(ours, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-6)


@pytest.mark.parametrize("query", QUERIES)
def test_pure_ranking_matches_the_reference(query):
    docs = {key: index_terms(text) for key, text in enumerate(zipf_texts(800, seed=7))}
    stats = bm25.ScopeStats(len(docs), sum(len(t) for t in docs.values()))
    documents = [bm25.Document(key, " ".join(terms)) for key, terms in docs.items()]
    ours = bm25.rank(parse_query(query), documents, stats, bm25.Bm25Params())
    assert_same_ranking(ours, reference_rank(docs, query.split()))
    assert ours, "the query should match something"


def test_pure_ranking_follows_other_parameters():
    docs = {key: index_terms(text) for key, text in enumerate(zipf_texts(300, seed=3))}
    stats = bm25.ScopeStats(len(docs), sum(len(t) for t in docs.values()))
    documents = [bm25.Document(key, " ".join(terms)) for key, terms in docs.items()]
    ours = bm25.rank(parse_query("w2 w40"), documents, stats, bm25.Bm25Params(k1=2.0, b=0.3))
    assert_same_ranking(ours, reference_rank(docs, ["w2", "w40"], k1=2.0, b=0.3))


def test_rare_terms_outrank_common_ones():
    docs = {1: ["common", "rare"], 2: ["common", "common"], 3: ["common", "other"]}
    documents = [bm25.Document(key, " ".join(terms)) for key, terms in docs.items()]
    ranked = bm25.rank(parse_query("common rare"), documents, bm25.ScopeStats(3, 6), bm25.Bm25Params())
    assert ranked[0][0] == 1


@pytest.fixture
def corpus(tenant, other_tenant, ranking):
    """Three conversations of `tenant`, one of `other_tenant`; returns entry id -> index terms per conversation."""
    texts = zipf_texts(240, seed=11)
    by_conversation: dict[str, dict[int, list[str]]] = {}
    for number, chunk in enumerate((texts[:100], texts[100:160], texts[160:200])):
        conversation = make_conversation(tenant, f"c{number}")
        run = make_run(conversation, f"r{number}")
        entries = add_messages(run, chunk)
        by_conversation[conversation.external_id] = {e.id: index_terms(e.text) for e in entries}
    outsider = make_run(make_conversation(other_tenant, "x0"), "rx")
    add_messages(outsider, texts[200:])
    return by_conversation


def results_as_pairs(response):
    return [(hit.entry_id, hit.score) for hit in response.results]


@pytest.mark.django_db
@pytest.mark.parametrize("query", DB_QUERIES)
def test_tenant_search_matches_the_reference_over_the_tenant(tenant, corpus, query):
    docs = {key: terms for conversation in corpus.values() for key, terms in conversation.items()}
    response = run_search(tenant=tenant, query=query, scope="tenant", limit=10)
    assert_same_ranking(results_as_pairs(response), reference_rank(docs, query.split())[:10])


@pytest.mark.django_db
@pytest.mark.parametrize("query", DB_QUERIES)
def test_conversation_search_takes_statistics_from_the_conversation_only(tenant, corpus, query):
    response = run_search(tenant=tenant, query=query, conversation_id="c1", limit=10)
    assert_same_ranking(results_as_pairs(response), reference_rank(corpus["c1"], query.split())[:10])


@pytest.mark.django_db
def test_run_search_takes_statistics_from_the_run_only(tenant, corpus):
    response = run_search(tenant=tenant, query="w3 w9", scope="run", run_id="r2", limit=10)
    assert_same_ranking(results_as_pairs(response), reference_rank(corpus["c2"], ["w3", "w9"])[:10])


@pytest.mark.django_db
@override_settings(SESSIONDESK_SEARCH_BM25_K1=1.8, SESSIONDESK_SEARCH_BM25_B=0.4)
def test_k1_and_b_come_from_settings(tenant, corpus):
    docs = {key: terms for conversation in corpus.values() for key, terms in conversation.items()}
    response = run_search(tenant=tenant, query="w4 w60", scope="tenant", limit=10)
    assert_same_ranking(results_as_pairs(response), reference_rank(docs, ["w4", "w60"], k1=1.8, b=0.4)[:10])
