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
from collections.abc import Collection, Iterable, Sequence
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
class Columns:
    """Postings of one term, column by column, in document order: `positions` holds each document's positions
    (absolute, ascending) one document after the other, `tfs[i]` of them for the i-th document."""

    ids: Ints
    tfs: Ints
    lengths: Ints
    positions: Ints

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, postings: Sequence[Posting]) -> "Columns":
        return cls(
            np.array([p.document for p in postings], dtype=np.int64),
            np.array([p.tf for p in postings], dtype=np.int64),
            np.array([p.length for p in postings], dtype=np.int64),
            np.array([q for p in postings for q in p.positions], dtype=np.int64),
        )

    def postings(self) -> list[Posting]:
        bounds = np.concatenate(([0], np.cumsum(self.tfs))).tolist()
        flat = self.positions.tolist()
        return [
            Posting(document, tuple(flat[bounds[i] : bounds[i + 1]]), length)
            for i, (document, length) in enumerate(zip(self.ids.tolist(), self.lengths.tolist(), strict=True))
        ]

    def slice(self, start: int, stop: int) -> "Columns":
        offsets = np.concatenate(([0], np.cumsum(self.tfs)))
        return Columns(
            self.ids[start:stop],
            self.tfs[start:stop],
            self.lengths[start:stop],
            self.positions[offsets[start] : offsets[min(stop, len(self))]],
        )

    def without(self, documents: Collection[int]) -> "Columns":
        """These postings less the given documents'."""
        keep = ~np.isin(self.ids, np.fromiter(documents, dtype=np.int64, count=len(documents)))
        return Columns(self.ids[keep], self.tfs[keep], self.lengths[keep], self.positions[np.repeat(keep, self.tfs)])

    @classmethod
    def merge(cls, parts: Sequence["Columns"]) -> "Columns":
        """Postings of disjoint document sets, put in document order."""
        parts = [part for part in parts if len(part)]
        if not parts:
            return _EMPTY
        ids = np.concatenate([p.ids for p in parts])
        tfs = np.concatenate([p.tfs for p in parts])
        lengths = np.concatenate([p.lengths for p in parts])
        positions = np.concatenate([p.positions for p in parts])
        if np.all(ids[1:] > ids[:-1]):
            return cls(ids, tfs, lengths, positions)
        # Out of order only when a transaction commits documents older than ones already folded.
        order = np.argsort(ids, kind="stable")
        segments = np.split(positions, np.cumsum(tfs)[:-1])
        return cls(ids[order], tfs[order], lengths[order], np.concatenate([segments[i] for i in order.tolist()]))


_EMPTY = Columns(*(np.zeros(0, dtype=np.int64) for _ in range(4)))


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


def _pack(values: Ints) -> bytes:
    if values.size and (values.min() < 0 or values.max() > 0xFFFFFFFF):
        raise ValueError("a block value does not fit in 32 bits")
    data = values.astype(_U4).tobytes()
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    return _DEFLATED + deflated if len(deflated) < len(data) else _RAW + data


def _unpack(payload: bytes) -> Ints:
    body = payload[1:]
    data = zlib.decompress(body, -15) if payload[:1] == _DEFLATED else body
    return np.frombuffer(data, dtype=_U4).astype(np.int64)


def frontier(tfs: Ints, lengths: Ints) -> tuple[Ints, Ints]:
    """The Pareto-maximal (tf, length) pairs: shortest first, each with a higher tf than every shorter one."""
    order = np.lexsort((-tfs, lengths))
    tfs, lengths = tfs[order], lengths[order]
    best_before = np.concatenate(([0], np.maximum.accumulate(tfs)[:-1]))
    keep = tfs > best_before
    return tfs[keep], lengths[keep]


def encode_frontier(tfs: Ints, lengths: Ints) -> bytes:
    return np.column_stack((tfs, lengths)).astype(_U4).tobytes()


def decode_frontier(data: bytes) -> tuple[Ints, Ints]:
    """(tfs, lengths) of the frontier."""
    values = np.frombuffer(data, dtype=_U4).astype(np.int64)
    return values[0::2], values[1::2]


def encode_columns(columns: Columns) -> EncodedBlock:
    """One block of 1 to BLOCK_SIZE postings in strictly increasing document order."""
    count = len(columns)
    if not 0 < count <= BLOCK_SIZE:
        raise ValueError(f"a block holds 1 to {BLOCK_SIZE} postings, got {count}")
    ids = columns.ids
    if np.any(ids[1:] <= ids[:-1]):
        raise ValueError("a block's documents must be in strictly increasing order")
    if np.any(columns.tfs <= 0) or int(columns.tfs.sum()) != len(columns.positions):
        raise ValueError("every posting needs as many positions as its tf, at least one")
    deltas = np.diff(ids, prepend=ids[0])
    starts = np.cumsum(columns.tfs) - columns.tfs
    position_deltas = np.diff(columns.positions, prepend=0)
    position_deltas[starts] = columns.positions[starts]
    return EncodedBlock(
        first=int(ids[0]),
        last=int(ids[-1]),
        count=count,
        postings=_pack(np.concatenate((deltas, columns.tfs, columns.lengths))),
        positions=_pack(position_deltas),
        frontier=encode_frontier(*frontier(columns.tfs, columns.lengths)),
    )


def encode(postings: Sequence[Posting]) -> EncodedBlock:
    if any(p.tf == 0 for p in postings):
        raise ValueError("a posting needs at least one position")
    return encode_columns(Columns.of(postings))


def decode(first: int, count: int, payload: bytes) -> DecodedBlock:
    values = _unpack(payload)
    ids = first + np.cumsum(values[:count])
    return DecodedBlock(ids, values[count : 2 * count], values[2 * count : 3 * count])


def _absolute_positions(tfs: Ints, payload: bytes) -> Ints:
    deltas = _unpack(payload)
    running = np.cumsum(deltas)
    starts = np.cumsum(tfs) - tfs
    before = running[starts] - deltas[starts]
    absolute: Ints = running - np.repeat(before, tfs)
    return absolute


def decode_positions(tfs: Ints, payload: bytes) -> list[Ints]:
    """Each document's positions of the term, in the block's document order."""
    return np.split(_absolute_positions(tfs, payload), np.cumsum(tfs)[:-1])


def decode_columns(block: EncodedBlock) -> Columns:
    decoded = decode(block.first, block.count, block.postings)
    return Columns(decoded.ids, decoded.tfs, decoded.lengths, _absolute_positions(decoded.tfs, block.positions))


def decode_postings(block: EncodedBlock) -> list[Posting]:
    """The block back as postings."""
    return decode_columns(block).postings()


def chunk_columns(columns: Columns, size: int = BLOCK_SIZE) -> list[EncodedBlock]:
    """Postings (in document order) cut into full blocks, the last one possibly partial."""
    return [encode_columns(columns.slice(start, start + size)) for start in range(0, len(columns), size)]


def chunk(postings: Sequence[Posting], size: int = BLOCK_SIZE) -> list[EncodedBlock]:
    return chunk_columns(Columns.of(postings), size)


def postings_of(document: int, terms: Sequence[str]) -> dict[str, Posting]:
    """A document's posting for each of its distinct terms: positions are indexes in its term list."""
    where: dict[str, list[int]] = {}
    for position, term in enumerate(terms):
        where.setdefault(term, []).append(position)
    return {term: Posting(document, tuple(found), len(terms)) for term, found in where.items()}


def invert(documents: Iterable[tuple[int, Sequence[str]]]) -> dict[str, Columns]:
    """Every term's postings over these documents (given in increasing id order), column by column.

    One pass filling flat arrays, one stable sort by term: a fold of many thousands of documents builds no
    Python object per posting.
    """
    vocabulary: dict[str, int] = {}
    term_ids: list[int] = []
    owners: list[int] = []
    lengths: list[int] = []
    documents_ids: list[int] = []
    for document, terms in documents:
        documents_ids.append(document)
        lengths.append(len(terms))
        term_ids.extend(vocabulary.setdefault(term, len(vocabulary)) for term in terms)
        owners.extend([len(lengths) - 1] * len(terms))
    if not term_ids:
        return {}
    tid = np.array(term_ids, dtype=np.int64)
    owner = np.array(owners, dtype=np.int64)
    position = np.arange(len(tid), dtype=np.int64) - np.repeat(np.cumsum(lengths) - np.array(lengths), lengths)
    order = np.argsort(tid, kind="stable")  # stable: each term's entries stay in document, then position, order
    tid, owner, position = tid[order], owner[order], position[order]
    cuts = np.flatnonzero(np.diff(tid)) + 1
    names = list(vocabulary)
    lengths_array = np.array(lengths, dtype=np.int64)
    ids_array = np.array(documents_ids, dtype=np.int64)
    out: dict[str, Columns] = {}
    for segment_owner, segment_position, term_id in zip(
        np.split(owner, cuts), np.split(position, cuts), tid[np.concatenate(([0], cuts))].tolist(), strict=True
    ):
        starts = np.concatenate(([True], segment_owner[1:] != segment_owner[:-1]))
        first_rows = np.flatnonzero(starts)
        tfs = np.diff(np.append(first_rows, len(segment_owner)))
        owners_of_term = segment_owner[first_rows]
        out[names[term_id]] = Columns(ids_array[owners_of_term], tfs, lengths_array[owners_of_term], segment_position)
    return out
