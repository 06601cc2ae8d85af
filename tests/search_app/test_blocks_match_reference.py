"""Searches over posting blocks equal brute-force BM25: same top 10, scores within 1e-9, exact counts.

Over 500 random queries per index state, of every class: rare word, common word, three words, phrase, negation
(of a word or a phrase), conversation scope, run scope, several tenants' scope; counts of messages and
conversations too. States: nothing folded yet (every document in the tail), everything folded, and folded with a
tail of new messages and tombstones of deleted ones. Conversations and runs are written interleaved (a second run
of a conversation after others, messages added to one after others were folded), so their documents' ids are
not contiguous, and their searches go through the scoped block ranker (search_app.ranking.scoped_blocks).
"""

import random

import pytest

from search_app import folding, index
from search_app.models import DeletedDocument, PostingBlock, UnfoldedDocument
from search_app.service import run_search
from search_app.tokenize import index_terms
from sessions_app.models import Conversation, Run, TranscriptEntry
from tests.search_app.factories import add_messages, make_conversation, make_run
from tests.search_app.reference_bm25 import reference_rank_clauses

VOCABULARY = [f"w{i}" for i in range(400)]
QUERIES_PER_STATE = 504


def texts(rng: random.Random, count: int) -> list[str]:
    weights = [1 / (rank + 1) ** 1.05 for rank in range(len(VOCABULARY))]
    return [" ".join(rng.choices(VOCABULARY, weights, k=rng.randint(2, 70))) for _ in range(count)]


class Corpus:
    """What is stored, as the reference sees it: entry id -> terms, per tenant and per conversation."""

    def __init__(self) -> None:
        self.by_conversation: dict[str, dict[int, list[str]]] = {}
        self.by_run: dict[str, dict[int, list[str]]] = {}
        self.tenant_of: dict[str, int] = {}

    def add(self, tenant, external_id: str, bodies: list[str], run_id: str | None = None) -> None:
        run_id = run_id or f"run-{external_id}"
        if external_id not in self.by_conversation:
            make_conversation(tenant, external_id)
            self.by_conversation[external_id] = {}
            self.tenant_of[external_id] = tenant.id
        if run_id not in self.by_run:
            conversation = Conversation.objects.get(tenant=tenant, external_id=external_id)
            make_run(conversation, run_id)
            self.by_run[run_id] = {}
        run = Run.objects.get(run_id=run_id)
        for entry in add_messages(run, bodies):
            self.by_conversation[external_id][entry.id] = index_terms(entry.text)
            self.by_run[run_id][entry.id] = self.by_conversation[external_id][entry.id]

    def remove(self, tenant, entry_ids: list[int]) -> None:
        index.entries_removed(tenant.id, entry_ids)
        TranscriptEntry.objects.filter(id__in=entry_ids).delete()
        for docs in [*self.by_conversation.values(), *self.by_run.values()]:
            for key in entry_ids:
                docs.pop(key, None)

    def docs(
        self, tenant_ids: set[int], conversation: str | None = None, run: str | None = None
    ) -> dict[int, list[str]]:
        if run is not None:
            return self.by_run[run]
        if conversation is not None:
            return self.by_conversation[conversation]
        return {
            key: terms
            for external_id, docs in self.by_conversation.items()
            if self.tenant_of[external_id] in tenant_ids
            for key, terms in docs.items()
        }


def build(tenant, other_tenant, rng: random.Random) -> Corpus:
    corpus = Corpus()
    for number, size in enumerate((400, 250, 150, 100, 60)):
        corpus.add(tenant, f"a{number}", texts(rng, size))
    for number, size in enumerate((200, 100)):
        corpus.add(other_tenant, f"b{number}", texts(rng, size))
    # A conversation's second run, written after the others: its documents' ids are apart from its first run's.
    corpus.add(tenant, "a0", texts(rng, 90), run_id="run-a0-again")
    return corpus


def random_query(rng: random.Random, kind: str, docs: dict[int, list[str]]):
    """(query text, positive clauses, excluded clauses): words are str, phrases tuples."""

    def phrase(length: int) -> tuple[str, ...]:
        terms = rng.choice([t for t in docs.values() if len(t) > length])
        at = rng.randrange(len(terms) - length + 1)
        return tuple(terms[at : at + length])

    def text(clause) -> str:
        return clause if isinstance(clause, str) else '"' + " ".join(clause) + '"'

    if kind == "rare":
        should, must_not = [rng.choice(VOCABULARY[150:])], []
    elif kind == "common":
        should, must_not = [rng.choice(VOCABULARY[:8])], []
    elif kind == "three":
        should, must_not = [rng.choice(VOCABULARY[:8]), *rng.sample(VOCABULARY[20:200], 2)], []
    elif kind == "phrase":
        should, must_not = [phrase(rng.choice((2, 2, 3)))], []
    else:  # negation
        should = [rng.choice(VOCABULARY[:40]), phrase(2)]
        must_not = [rng.choice([rng.choice(VOCABULARY[:6]), phrase(2)])]
    should = list(dict.fromkeys(should))
    must_not = [c for c in must_not if c not in should]
    query = " ".join(text(c) for c in should) + "".join(f" -{text(c)}" for c in must_not)
    return query, should, must_not


def check(response, expected, corpus: Corpus) -> None:
    assert response.total_matches == len(expected), response
    matched = {key for key, _ in expected}
    conversations = {c for c, docs in corpus.by_conversation.items() if matched.intersection(docs)}
    assert response.total_conversations == len(conversations)
    got = [(hit.entry_id, hit.score) for hit in response.results]
    assert [key for key, _ in got] == [key for key, _ in expected[:10]]
    for (_, ours), (_, theirs) in zip(got, expected[:10], strict=True):
        assert abs(ours - theirs) <= 1e-9


@pytest.fixture(autouse=True)
def blocks_ranked(monkeypatch):
    """Counts the searches ranked from blocks, to check the tenant-wide ones were."""
    from search_app.ranking import block_ranking

    calls = []
    original = block_ranking.BlockSearch

    def spy(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(block_ranking, "BlockSearch", spy)
    return calls


@pytest.fixture(autouse=True)
def scoped_ranked(monkeypatch):
    """The conversation and run searches ranked from blocks (search_app.ranking.scoped_blocks)."""
    from search_app.ranking import scoped_blocks

    calls = []
    original = scoped_blocks.ScopedBlockRanker._rank_all

    def spy(self):
        calls.append(self.search.scope)
        return original(self)

    monkeypatch.setattr(scoped_blocks.ScopedBlockRanker, "_rank_all", spy)
    return calls


def run_queries(tenant, other_tenant, corpus: Corpus, rng: random.Random) -> None:
    kinds = ["rare", "common", "three", "phrase", "negation"]
    conversations = [c for c, t in corpus.tenant_of.items() if t == tenant.id]
    runs = [r for r in corpus.by_run if r.removeprefix("run-").split("-")[0] in conversations]
    for i in range(QUERIES_PER_STATE):
        scope = ("tenant", "conversation", "tenants", "run")[i % 4] if i % 7 >= 3 else "tenant"
        kind = kinds[i % len(kinds)]
        if scope == "run":
            run = rng.choice(runs)
            docs = corpus.docs({tenant.id}, run=run)
            query, should, must_not = random_query(rng, kind, docs)
            response = run_search(tenant=tenant, query=query, scope="run", run_id=run)
        elif scope == "conversation":
            conversation = rng.choice(conversations)
            docs = corpus.docs({tenant.id}, conversation)
            query, should, must_not = random_query(rng, kind, docs)
            response = run_search(tenant=tenant, query=query, conversation_id=conversation)
        elif scope == "tenants":
            docs = corpus.docs({tenant.id, other_tenant.id})
            query, should, must_not = random_query(rng, kind, docs)
            response = run_search(tenant=tenant, query=query, scope="tenants", tenants=[tenant, other_tenant])
        else:
            docs = corpus.docs({tenant.id})
            query, should, must_not = random_query(rng, kind, docs)
            response = run_search(tenant=tenant, query=query, scope="tenant")
        check(response, reference_rank_clauses(docs, should, must_not), corpus)


def assert_scoped(scoped_ranked) -> None:
    """Both conversation and run searches went through the scoped block ranker, many of each."""
    conversations = [scope for scope in scoped_ranked if scope.run_pk is None]
    runs = [scope for scope in scoped_ranked if scope.run_pk is not None]
    assert len(conversations) > QUERIES_PER_STATE / 12
    assert len(runs) > QUERIES_PER_STATE / 12


@pytest.mark.django_db
def test_every_document_in_the_tail(tenant, other_tenant, blocks_ranked, scoped_ranked):
    rng = random.Random(1)
    corpus = build(tenant, other_tenant, rng)
    assert not PostingBlock.objects.exists()
    run_queries(tenant, other_tenant, corpus, rng)
    assert len(blocks_ranked) > QUERIES_PER_STATE / 2
    assert_scoped(scoped_ranked)


@pytest.mark.django_db
def test_every_document_folded(tenant, other_tenant, blocks_ranked, scoped_ranked):
    rng = random.Random(2)
    corpus = build(tenant, other_tenant, rng)
    folding.fold_everything()
    assert not UnfoldedDocument.objects.exists()
    run_queries(tenant, other_tenant, corpus, rng)
    assert len(blocks_ranked) > QUERIES_PER_STATE / 2
    assert_scoped(scoped_ranked)


@pytest.mark.django_db
def test_folded_blocks_with_a_tail_and_tombstones(tenant, other_tenant, blocks_ranked, scoped_ranked):
    rng = random.Random(3)
    corpus = build(tenant, other_tenant, rng)
    # Small batches: blocks appended to by several folds, as a live tenant's are.
    folding.fold_tenant(tenant.id, batch=97)
    folding.fold_tenant(other_tenant.id)
    corpus.add(tenant, "a1", texts(rng, 120))
    corpus.add(tenant, "a9", texts(rng, 40))
    gone = rng.sample(sorted(corpus.by_conversation["a0"]), 30) + rng.sample(sorted(corpus.by_conversation["a2"]), 10)
    corpus.remove(tenant, gone)
    assert DeletedDocument.objects.count() == 40
    assert UnfoldedDocument.objects.count() == 160
    run_queries(tenant, other_tenant, corpus, rng)
    assert len(blocks_ranked) > QUERIES_PER_STATE / 2
    assert_scoped(scoped_ranked)
