"""Block postings: encoding round-trips, and the frontier bound is the block's exact best score. No database."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search_app import blocks, bm25
from search_app.topk import norms


@st.composite
def posting_lists(draw, max_size=blocks.BLOCK_SIZE):
    ids = sorted(draw(st.sets(st.integers(1, 2**40), min_size=1, max_size=max_size)))
    # Ids of one block lie within 2**32 of each other (a tenant's documents); the first may be anywhere.
    ids = [ids[0] + (i - ids[0]) % 2**31 for i in ids]
    ids = sorted(set(ids))
    out = []
    for document in ids:
        length = draw(st.integers(1, 60_000))
        positions = sorted(draw(st.sets(st.integers(0, length - 1), min_size=1, max_size=min(length, 20))))
        out.append(blocks.Posting(document, tuple(positions), length, draw(st.integers(1, 2**31))))
    return out


@given(posting_lists())
@settings(max_examples=200, deadline=None)
def test_a_block_decodes_to_what_was_encoded(postings):
    encoded = blocks.encode(postings)
    assert (encoded.first, encoded.last, encoded.count) == (postings[0].document, postings[-1].document, len(postings))
    assert blocks.decode_postings(encoded) == postings


@given(st.lists(posting_lists(max_size=40), min_size=1, max_size=6))
@settings(max_examples=200, deadline=None)
def test_many_blocks_decode_at_once_as_each_does_alone(lists):
    encoded = [blocks.encode(postings) for postings in lists]
    rows = [(e.first, e.count, e.postings, e.conversations) for e in encoded]
    for batch in (rows, rows[:1]):
        alone = [blocks.decode(*row) for row in batch]
        together = blocks.decode_many(batch)
        assert len(together) == len(alone)
        for one, other in zip(together, alone, strict=True):
            assert one.ids.tolist() == other.ids.tolist()
            assert one.tfs.tolist() == other.tfs.tolist()
            assert one.lengths.tolist() == other.lengths.tolist()
            assert one.conversations is not None and other.conversations is not None
            assert one.conversations.tolist() == other.conversations.tolist()


@given(posting_lists(max_size=400))
@settings(max_examples=50, deadline=None)
def test_chunks_hold_every_posting_in_order_in_full_blocks(postings):
    chunks = blocks.chunk(postings)
    assert all(c.count == blocks.BLOCK_SIZE for c in chunks[:-1])
    assert [p for c in chunks for p in blocks.decode_postings(c)] == postings


@given(
    posting_lists(),
    st.floats(1.0, 500.0),
    st.floats(0.0, 3.0),
    st.floats(0.0, 1.0),
)
@settings(max_examples=200, deadline=None)
def test_the_frontier_gives_the_exact_best_score_of_the_block(postings, average, k1, b):
    params = bm25.Bm25Params(k1=k1, b=b)
    stats = bm25.ScopeStats(1000, int(average * 1000))
    encoded = blocks.encode(postings)
    tfs, lengths = blocks.decode_frontier(encoded.frontier)
    bound = float(norms(tfs, lengths, stats, params).max())
    best = max(bm25.tf_norm(p.tf, p.length, stats.average_length, params) for p in postings)
    assert bound == best


@given(posting_lists())
@settings(max_examples=100, deadline=None)
def test_a_payload_is_never_longer_than_its_raw_form_and_a_marker(postings):
    encoded = blocks.encode(postings)
    assert len(encoded.postings) <= 1 + 3 * 4 * len(postings)


def test_a_full_block_of_alike_documents_packs_to_a_few_bytes_a_posting():
    many = blocks.encode([blocks.Posting(i, (0, 5), 30) for i in range(1, 129)])
    assert many.postings[:1] == b"\x01" and len(many.postings) < 128


def test_a_block_refuses_unordered_documents_and_empty_postings():
    with pytest.raises(ValueError):
        blocks.encode([blocks.Posting(5, (0,), 1), blocks.Posting(5, (0,), 1)])
    with pytest.raises(ValueError):
        blocks.encode([blocks.Posting(5, (), 1)])
    with pytest.raises(ValueError):
        blocks.encode([])


def test_postings_of_a_document_list_each_term_with_its_positions():
    found = blocks.postings_of(9, ["a", "b", "a"])
    assert found == {"a": blocks.Posting(9, (0, 2), 3), "b": blocks.Posting(9, (1,), 3)}
    assert blocks.postings_of(9, ["a"], 4)["a"].conversation == 4


@given(st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=30), min_size=1, max_size=40))
@settings(max_examples=100, deadline=None)
def test_inverting_documents_gives_each_term_its_postings(texts):
    documents = [(10 + 3 * i, terms, 100 + i // 3) for i, terms in enumerate(texts)]
    expected: dict[str, list[blocks.Posting]] = {}
    for document, terms, conversation in documents:
        for term, posting in blocks.postings_of(document, terms, conversation).items():
            expected.setdefault(term, []).append(posting)
    inverted = blocks.invert(documents)
    assert {term: inverted.columns(i).postings() for i, term in enumerate(inverted.terms)} == expected
    cut = {term: inverted.blocks(i) for i, term in enumerate(inverted.terms)}
    assert {term: [p for b in found for p in blocks.decode_postings(b)] for term, found in cut.items()} == expected


@given(posting_lists(max_size=300), st.data())
@settings(max_examples=50, deadline=None)
def test_merging_and_removing_keep_document_order(postings, data):
    split = data.draw(st.integers(0, len(postings)))
    odd, even = postings[split:], postings[:split]
    merged = blocks.Columns.merge([blocks.Columns.of(odd), blocks.Columns.of(even)])
    assert merged.postings() == postings
    gone = {p.document for p in postings[::3]}
    assert merged.without(gone).postings() == [p for p in postings if p.document not in gone]
