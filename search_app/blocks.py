"""Compact postings: one (tenant, term)'s documents in blocks of at most 128, each with an exact score bound. Pure.

A block holds, for each of its documents in id order: the id (delta-encoded from the block's first id), the
term's frequency in it, the document's length, and the term's positions in it (delta-encoded per document). Ids,
frequencies and lengths are one payload, positions another, so ranking a word never reads positions; only
phrases do. Each payload is the little-endian uint32 array, raw-deflated when that is smaller (a block of one
or two documents does not gain from deflate's framing), behind one byte saying which.

The score bound is the block's (tf, length) frontier: its Pareto-maximal pairs (no other document of the block
has both a higher or equal tf and a shorter or equal length). BM25's term weight grows with tf and shrinks with
length for any idf, average length, k1 and b, so the block's maximum score for the term is attained at one of
these pairs and is computed exactly at query time from the statistics of the scope searched. Lucene keeps
per-block impacts the same way; pg_textsearch quantizes lengths instead, which makes its bounds approximate.
"""

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

BLOCK_SIZE = 128
_RAW, _DEFLATED = b"\x00", b"\x01"
_U4 = np.dtype("<u4")

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Posting:
    """One document's entry in a term's postings: its id, the term's positions in it, and its length."""

    document: int
    positions: tuple[int, ...]
    length: int

    @property
    def tf(self) -> int:
        return len(self.positions)


@dataclass(frozen=True, slots=True)
class EncodedBlock:
    """A block as stored: its id range and size in the clear (to skip it unread), the rest packed."""

    first: int
    last: int
    count: int
    postings: bytes
    positions: bytes
    frontier: bytes


@dataclass(frozen=True, slots=True)
class DecodedBlock:
    ids: Ints
    tfs: Ints
    lengths: Ints


def _pack(values: Sequence[int] | Ints) -> bytes:
    raw = np.asarray(values, dtype=np.int64)
    if raw.size and (raw.min() < 0 or raw.max() > 0xFFFFFFFF):
        raise ValueError("a block value does not fit in 32 bits")
    data = raw.astype(_U4).tobytes()
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    return _DEFLATED + deflated if len(deflated) < len(data) else _RAW + data


def _unpack(payload: bytes) -> Ints:
    body = payload[1:]
    data = zlib.decompress(body, -15) if payload[:1] == _DEFLATED else body
    return np.frombuffer(data, dtype=_U4).astype(np.int64)


def frontier(tfs: Sequence[int], lengths: Sequence[int]) -> list[tuple[int, int]]:
    """The Pareto-maximal (tf, length) pairs: shortest first, each with a higher tf than every shorter one."""
    pairs = sorted(set(zip(tfs, lengths, strict=True)), key=lambda pair: (pair[1], -pair[0]))
    kept: list[tuple[int, int]] = []
    for tf, length in pairs:
        if not kept or tf > kept[-1][0]:
            kept.append((tf, length))
    return kept


def encode_frontier(pairs: Sequence[tuple[int, int]]) -> bytes:
    return np.asarray([value for pair in pairs for value in pair], dtype=_U4).tobytes()


def decode_frontier(data: bytes) -> tuple[Ints, Ints]:
    """(tfs, lengths) of the frontier."""
    values = np.frombuffer(data, dtype=_U4).astype(np.int64)
    return values[0::2], values[1::2]


def encode(postings: Sequence[Posting]) -> EncodedBlock:
    """One block of postings in strictly increasing document order."""
    if not 0 < len(postings) <= BLOCK_SIZE:
        raise ValueError(f"a block holds 1 to {BLOCK_SIZE} postings, got {len(postings)}")
    ids = [p.document for p in postings]
    if any(b <= a for a, b in zip(ids, ids[1:], strict=False)):
        raise ValueError("a block's documents must be in strictly increasing order")
    if any(p.tf == 0 for p in postings):
        raise ValueError("a posting needs at least one position")
    first = ids[0]
    deltas = [0] + [b - a for a, b in zip(ids, ids[1:], strict=False)]
    tfs = [p.tf for p in postings]
    lengths = [p.length for p in postings]
    position_deltas: list[int] = []
    for posting in postings:
        previous = 0
        for position in posting.positions:
            position_deltas.append(position - previous)
            previous = position
    return EncodedBlock(
        first=first,
        last=ids[-1],
        count=len(postings),
        postings=_pack(deltas + tfs + lengths),
        positions=_pack(position_deltas),
        frontier=encode_frontier(frontier(tfs, lengths)),
    )


def decode(first: int, count: int, payload: bytes) -> DecodedBlock:
    values = _unpack(payload)
    ids = first + np.cumsum(values[:count])
    return DecodedBlock(ids, values[count : 2 * count], values[2 * count : 3 * count])


def decode_positions(tfs: Ints, payload: bytes) -> list[Ints]:
    """Each document's positions of the term, in the block's document order."""
    deltas = _unpack(payload)
    bounds = np.concatenate(([0], np.cumsum(tfs)))
    return [np.cumsum(deltas[bounds[i] : bounds[i + 1]]) for i in range(len(tfs))]


def decode_postings(block: EncodedBlock) -> list[Posting]:
    """The block back as postings (for merging and rewriting)."""
    decoded = decode(block.first, block.count, block.postings)
    positions = decode_positions(decoded.tfs, block.positions)
    return [
        Posting(int(document), tuple(int(p) for p in where), int(length))
        for document, where, length in zip(decoded.ids, positions, decoded.lengths, strict=True)
    ]


def chunk(postings: Sequence[Posting], size: int = BLOCK_SIZE) -> list[EncodedBlock]:
    """Postings (in document order) cut into full blocks, the last one possibly partial."""
    return [encode(postings[start : start + size]) for start in range(0, len(postings), size)]


def postings_of(document: int, terms: Sequence[str]) -> dict[str, Posting]:
    """A document's posting for each of its distinct terms: positions are indexes in its term list."""
    where: dict[str, list[int]] = {}
    for position, term in enumerate(terms):
        where.setdefault(term, []).append(position)
    return {term: Posting(document, tuple(found), len(terms)) for term, found in where.items()}
