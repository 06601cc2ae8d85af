"""Exact top k over blocks equals search_app.bm25's brute-force ranking: same top k, same scores. No database."""

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from search_app import blocks, bm25
from search_app.query import parse_query
from search_app.topk import BlockInfo, phrase_frequency, range_maxima, rank_all, top_k

VOCABULARY = [f"w{i}" for i in range(400)]


def corpus(count: int, seed: int, first_id: int = 1) -> dict[int, list[str]]:
    rng = random.Random(seed)
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(VOCABULARY))]
    return {
        first_id + i * rng.randint(1, 3): rng.choices(VOCABULARY, weights, k=rng.randint(1, 80)) for i in range(count)
    }


class MemoryIndex:
    """The blocks of several tenants' documents, kept in memory, read as the database reader would be."""

    def __init__(self, tenants: dict[int, dict[int, list[str]]]) -> None:
        self.stored: dict[int, blocks.EncodedBlock] = {}
        self.infos: list[BlockInfo] = []
        for tenant, docs in tenants.items():
            by_term: dict[str, list[blocks.Posting]] = {}
            for document in sorted(docs):
                for term, posting in blocks.postings_of(document, docs[document]).items():
                    by_term.setdefault(term, []).append(posting)
            for term, postings in by_term.items():
                for encoded in blocks.chunk(postings):
                    key = len(self.stored) + 1
                    self.stored[key] = encoded
                    tfs, lengths = blocks.decode_frontier(encoded.frontier)
                    self.infos.append(
                        BlockInfo(key, tenant, term, encoded.first, encoded.last, encoded.count, tfs, lengths)
                    )
        self.reads = 0

    def postings(self, keys):
        self.reads += len(keys)
        return {k: blocks.decode(self.stored[k].first, self.stored[k].count, self.stored[k].postings) for k in keys}

    def positions(self, keys):
        return {k: self.stored[k].positions for k in keys}


def brute_force(docs: dict[int, list[str]], query: str, k: int) -> list[tuple[int, float]]:
    stats = bm25.ScopeStats(len(docs), sum(len(t) for t in docs.values()))
    documents = [bm25.Document(key, " ".join(terms)) for key, terms in docs.items()]
    return bm25.rank(parse_query(query), documents, stats, bm25.Bm25Params())[:k]


def ours(index: MemoryIndex, docs: dict[int, list[str]], query: str, k: int) -> list[tuple[int, float]]:
    parsed = parse_query(query)
    stats = bm25.ScopeStats(len(docs), sum(len(t) for t in docs.values()))
    documents = [bm25.Document(key, " ".join(terms)) for key, terms in docs.items()]
    df = bm25.document_frequencies(parsed, documents)
    for clause in parsed.must_not:
        for term in getattr(clause, "terms", (getattr(clause, "term", None),)):
            df.setdefault(term, 0)
    return top_k(parsed, index.infos, df, stats, bm25.Bm25Params(), index, k)


def random_queries(rng: random.Random, docs: dict[int, list[str]], count: int) -> list[str]:
    texts = list(docs.values())
    out = []
    for i in range(count):
        kind = i % 6
        if kind == 0:
            out.append(rng.choice(VOCABULARY[200:]))
        elif kind == 1:
            out.append(rng.choice(VOCABULARY[:10]))
        elif kind == 2:
            out.append(" ".join([rng.choice(VOCABULARY[:10]), *rng.sample(VOCABULARY[20:150], 2)]))
        elif kind == 3:
            text = rng.choice([t for t in texts if len(t) > 2])
            at = rng.randrange(len(text) - 1)
            out.append(f'"{text[at]} {text[at + 1]}"')
        elif kind == 4:
            out.append(f"{rng.choice(VOCABULARY[:30])} -{rng.choice(VOCABULARY[:5])}")
        else:
            text = rng.choice([t for t in texts if len(t) > 3])
            at = rng.randrange(len(text) - 2)
            out.append(f'{rng.choice(VOCABULARY[:40])} "{text[at]} {text[at + 1]} {text[at + 2]}" -"w0 w1"')
    return out


def assert_same(found, expected):
    assert [key for key, _ in found] == [key for key, _ in expected]
    for (_, a), (_, b) in zip(found, expected, strict=True):
        assert abs(a - b) <= 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_top_k_over_blocks_equals_brute_force(seed):
    docs = corpus(1500, seed)
    index = MemoryIndex({1: docs})
    for query in random_queries(random.Random(seed), docs, 120):
        assert_same(ours(index, docs, query, 10), brute_force(docs, query, 10))


def every_match(index: MemoryIndex, docs: dict[int, list[str]], query: str) -> list[tuple[int, float]]:
    parsed = parse_query(query)
    stats = bm25.ScopeStats(len(docs), sum(len(t) for t in docs.values()))
    documents = [bm25.Document(key, " ".join(terms)) for key, terms in docs.items()]
    df = bm25.document_frequencies(parsed, documents)
    for clause in parsed.must_not:
        for term in getattr(clause, "terms", (getattr(clause, "term", None),)):
            df.setdefault(term, 0)
    return rank_all(parsed, index.infos, df, stats, bm25.Bm25Params(), index)


@pytest.mark.parametrize("seed", range(3))
def test_every_match_ranked_at_once_is_the_whole_brute_force_ranking(seed):
    # Words, phrases (repeated words included), exclusions; two tenants with interleaved ids.
    first = {key * 2: terms for key, terms in corpus(700, seed).items()}
    second = {key * 2 + 1: terms for key, terms in corpus(700, seed + 10).items()}
    repeated = {1: {10**6: ["w0", "w0", "w0", "w1"]}, 2: {10**6 + 1: ["w0", "w0", "w0", "w0"]}}
    docs = {**first, **second, **repeated[1], **repeated[2]}
    index = MemoryIndex({1: {**first, **repeated[1]}, 2: {**second, **repeated[2]}})
    queries = [*random_queries(random.Random(seed), docs, 60), '"w0 w0"', '"w0 w0" -w1', '"w1 w0" "w0 w1"']
    for query in queries:
        assert_same(every_match(index, docs, query), brute_force(docs, query, len(docs)))


def test_every_match_ranked_at_once_reads_each_block_once():
    docs = corpus(5000, 4)
    index = MemoryIndex({1: docs})
    every_match(index, docs, '"w0 w1"')
    read_once = index.reads
    assert read_once <= sum(1 for info in index.infos if info.term in ("w0", "w1"))


def test_several_tenants_are_one_scope_with_their_own_blocks():
    # Interleaved ids, as two tenants' concurrent writes make them.
    first = {key * 2: terms for key, terms in corpus(700, 1).items()}
    second = {key * 2 + 1: terms for key, terms in corpus(700, 2).items()}
    docs = {**first, **second}
    index = MemoryIndex({1: first, 2: second})
    for query in random_queries(random.Random(5), docs, 60):
        assert_same(ours(index, docs, query, 10), brute_force(docs, query, 10))


def test_a_common_word_reads_few_blocks():
    docs = corpus(20_000, 9)
    index = MemoryIndex({1: docs})
    assert_same(ours(index, docs, "w1", 10), brute_force(docs, "w1", 10))
    blocks_of_w1 = sum(1 for info in index.infos if info.term == "w1")
    assert index.reads < blocks_of_w1 / 4


def test_fewer_matches_than_k_are_all_returned():
    docs = {1: ["a", "b"], 2: ["b"], 3: ["c"]}
    index = MemoryIndex({1: docs})
    assert_same(ours(index, docs, "b", 10), brute_force(docs, "b", 10))


@given(
    st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=300),
    st.lists(st.tuples(st.integers(0, 310), st.integers(0, 310)), max_size=60),
)
def test_range_maxima_are_each_slice_s_maximum(values, ranges):
    array = np.array(values)
    low = np.array([min(a, len(values)) for a, _ in ranges], dtype=np.int64)
    high = np.array([min(b, len(values)) for _, b in ranges], dtype=np.int64)
    expected = [array[a:b].max() if b > a else 0.0 for a, b in zip(low.tolist(), high.tolist(), strict=True)]
    assert range_maxima(array, low, high).tolist() == expected


def test_phrase_frequency_counts_non_overlapping_runs():
    def arr(*values):
        return list(values)

    assert phrase_frequency([arr(0, 1, 2), arr(0, 1, 2)]) == 1  # "a a" in "a a a"
    assert phrase_frequency([arr(0, 2, 4), arr(1, 3)]) == 2
    assert bm25.phrase_frequency(["a", "a", "a", "a"], ["a", "a"]) == phrase_frequency([arr(0, 1, 2, 3)] * 2)
