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

import sys
import zlib
from array import array
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

BLOCK_SIZE = 128
_RAW, _DEFLATED = b"\x00", b"\x01"
_U4 = np.dtype("<u4")
_BIG_ENDIAN = sys.byteorder == "big"
assert array("I").itemsize == 4, "blocks are packed as 32-bit unsigned integers"  # noqa: S101 - an invariant

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Posting:
    """One document's entry in a term's postings: its id, the term's positions in it, and its length."""

    document: int
    positions: tuple[int, ...]
    length: int
    conversation: int = 0

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
    conversations: Ints

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, postings: Sequence[Posting]) -> "Columns":
        return cls(
            np.array([p.document for p in postings], dtype=np.int64),
            np.array([p.tf for p in postings], dtype=np.int64),
            np.array([p.length for p in postings], dtype=np.int64),
            np.array([q for p in postings for q in p.positions], dtype=np.int64),
            np.array([p.conversation for p in postings], dtype=np.int64),
        )

    def postings(self) -> list[Posting]:
        bounds = np.concatenate(([0], np.cumsum(self.tfs))).tolist()
        flat = self.positions.tolist()
        rows = zip(self.ids.tolist(), self.lengths.tolist(), self.conversations.tolist(), strict=True)
        return [
            Posting(document, tuple(flat[bounds[i] : bounds[i + 1]]), length, conversation)
            for i, (document, length, conversation) in enumerate(rows)
        ]

    def slice(self, start: int, stop: int) -> "Columns":
        offsets = np.concatenate(([0], np.cumsum(self.tfs)))
        return Columns(
            self.ids[start:stop],
            self.tfs[start:stop],
            self.lengths[start:stop],
            self.positions[offsets[start] : offsets[min(stop, len(self))]],
            self.conversations[start:stop],
        )

    def without(self, documents: Collection[int]) -> "Columns":
        """These postings less the given documents'."""
        if not documents:
            return self  # a fold with no tombstones, the common case: no copy of each block it rewrites
        keep = ~np.isin(self.ids, np.fromiter(documents, dtype=np.int64, count=len(documents)))
        positions = self.positions[np.repeat(keep, self.tfs)]
        return Columns(self.ids[keep], self.tfs[keep], self.lengths[keep], positions, self.conversations[keep])

    @classmethod
    def merge(cls, parts: Sequence["Columns"]) -> "Columns":
        """Postings of disjoint document sets, put in document order."""
        parts = [part for part in parts if len(part)]
        if not parts:
            return _EMPTY
        if len(parts) == 1:
            return parts[0]
        ids = np.concatenate([p.ids for p in parts])
        tfs = np.concatenate([p.tfs for p in parts])
        lengths = np.concatenate([p.lengths for p in parts])
        positions = np.concatenate([p.positions for p in parts])
        conversations = np.concatenate([p.conversations for p in parts])
        if np.all(ids[1:] > ids[:-1]):
            return cls(ids, tfs, lengths, positions, conversations)
        # Out of order only when a transaction commits documents older than ones already folded.
        order = np.argsort(ids, kind="stable")
        segments = np.split(positions, np.cumsum(tfs)[:-1])
        reordered = np.concatenate([segments[i] for i in order.tolist()])
        return cls(ids[order], tfs[order], lengths[order], reordered, conversations[order])


_EMPTY = Columns(*(np.zeros(0, dtype=np.int64) for _ in range(5)))


@dataclass(frozen=True, slots=True)
class EncodedBlock:
    """A block as stored: its id range and size in the clear (to skip it unread), the rest packed."""

    first: int
    last: int
    count: int
    postings: bytes
    positions: bytes
    frontier: bytes
    conversations: bytes


@dataclass(frozen=True, slots=True)
class DecodedBlock:
    ids: Ints
    tfs: Ints
    lengths: Ints
    conversations: Ints | None = None
    """Read only to count matching conversations."""


def _pack(values: Sequence[int]) -> bytes:
    try:
        packed = array("I", values)  # "I" is 4 bytes wherever numpy runs; checked at import below
    except OverflowError:
        raise ValueError("a block value does not fit in 32 bits") from None
    if _BIG_ENDIAN:
        packed.byteswap()
    data = packed.tobytes()
    if len(data) <= 16:  # deflate's own framing makes so few values longer, not shorter
        return _RAW + data
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    return _DEFLATED + deflated if len(deflated) < len(data) else _RAW + data


def _unpack(payload: bytes) -> Ints:
    return _unpack_many([payload])


def _unpack_many(payloads: Sequence[bytes]) -> Ints:
    """The payloads' values, one after the other."""
    inflated = [zlib.decompress(p[1:], -15) if p[:1] == _DEFLATED else p[1:] for p in payloads]
    return np.frombuffer(b"".join(inflated), dtype=_U4).astype(np.int64)


def decode_frontier(data: bytes) -> tuple[Ints, Ints]:
    """(tfs, lengths) of the frontier."""
    values = np.frombuffer(data, dtype=_U4).astype(np.int64)
    return values[0::2], values[1::2]


def encode_columns(columns: Columns) -> EncodedBlock:
    """One block of 1 to BLOCK_SIZE postings in strictly increasing document order."""
    ids, tfs, lengths = columns.ids.tolist(), columns.tfs.tolist(), columns.lengths.tolist()
    return encode_lists(ids, tfs, lengths, columns.positions.tolist(), columns.conversations.tolist())


def encode_lists(
    ids: list[int], tfs: list[int], lengths: list[int], positions: list[int], conversations: list[int]
) -> EncodedBlock:
    """`encode_columns` on plain lists: most blocks hold one or two documents (rare terms), and for so few values
    Python's own loops cost less than numpy's per-call overhead."""
    count = len(ids)
    if not 0 < count <= BLOCK_SIZE:
        raise ValueError(f"a block holds 1 to {BLOCK_SIZE} postings, got {count}")
    deltas = [0] + [b - a for a, b in zip(ids, ids[1:], strict=False)]
    if min(deltas[1:], default=1) <= 0:
        raise ValueError("a block's documents must be in strictly increasing order")
    if min(tfs) <= 0 or sum(tfs) != len(positions):
        raise ValueError("every posting needs as many positions as its tf, at least one")
    position_deltas: list[int] = []
    at = 0
    for tf in tfs:
        previous = 0
        for position in positions[at : at + tf]:
            position_deltas.append(position - previous)
            previous = position
        at += tf
    # The frontier: the Pareto-maximal (tf, length) pairs, shortest first, each with a higher tf than any shorter.
    pairs = sorted(set(zip(tfs, lengths, strict=True)), key=lambda pair: (pair[1], -pair[0]))
    best: list[int] = []
    for tf, length in pairs:
        if not best or tf > best[-2]:
            best += (tf, length)
    return EncodedBlock(
        first=ids[0],
        last=ids[-1],
        count=count,
        postings=_pack(deltas + tfs + lengths),
        positions=_pack(position_deltas),
        frontier=_pack_plain(best),
        conversations=_pack(conversations),
    )


def _pack_plain(values: list[int]) -> bytes:
    packed = array("I", values)
    if _BIG_ENDIAN:
        packed.byteswap()
    return packed.tobytes()


def encode(postings: Sequence[Posting]) -> EncodedBlock:
    if any(p.tf == 0 for p in postings):
        raise ValueError("a posting needs at least one position")
    return encode_columns(Columns.of(postings))


def decode(first: int, count: int, payload: bytes, conversations: bytes | None = None) -> DecodedBlock:
    values = _unpack(payload)
    ids = first + np.cumsum(values[:count])
    owners = _unpack(conversations) if conversations is not None else None
    return DecodedBlock(ids, values[count : 2 * count], values[2 * count : 3 * count], owners)


def decode_many(rows: Sequence[tuple[int, int, bytes, bytes]]) -> list[DecodedBlock]:
    """`decode` of many (first, count, postings, conversations) rows: each payload is inflated on its own, the
    rest is computed over all of them at once (a common word's search reads hundreds of blocks, and per block the
    fixed cost of numpy's calls was most of decoding it)."""
    if not rows:
        return []
    counts = np.fromiter((count for _, count, _, _ in rows), dtype=np.int64, count=len(rows))
    firsts = np.fromiter((first for first, _, _, _ in rows), dtype=np.int64, count=len(rows))
    begins = np.cumsum(counts) - counts  # each block's first document among all of them
    starts = 3 * begins  # each block's payload: its id deltas, its tfs, then its lengths
    values = _unpack_many([payload for _, _, payload, _ in rows])
    deltas = values[np.repeat(starts - begins, counts) + np.arange(int(counts.sum()))]
    running = np.cumsum(deltas)
    ids = running - np.repeat(running[begins] - deltas[begins] - firsts, counts)  # first + each block's own sum
    owners = _unpack_many([owners for _, _, _, owners in rows])
    return [
        DecodedBlock(
            ids[begin : begin + count],
            values[start + count : start + 2 * count],
            values[start + 2 * count : start + 3 * count],
            owners[begin : begin + count],
        )
        for begin, start, count in zip(begins.tolist(), starts.tolist(), counts.tolist(), strict=True)
    ]


def absolute_positions(tfs: Ints, payload: bytes) -> Ints:
    """Each document's positions of the term, one document after the other (`tfs[i]` for the i-th)."""
    deltas = _unpack(payload)
    running = np.cumsum(deltas)
    starts = np.cumsum(tfs) - tfs
    before = running[starts] - deltas[starts]
    absolute: Ints = running - np.repeat(before, tfs)
    return absolute


def absolute_positions_of(tfs: Sequence[Ints], payloads: Sequence[bytes]) -> list[Ints]:
    """`absolute_positions` of many blocks, computed over all of them at once (each block's documents restart
    their positions just as each document does within a block)."""
    if not payloads:
        return []
    every_tf = np.concatenate(tfs)
    deltas = np.concatenate([_unpack(payload) for payload in payloads])
    running = np.cumsum(deltas)
    starts = np.cumsum(every_tf) - every_tf
    before = running[starts] - deltas[starts]
    absolute = running - np.repeat(before, every_tf)
    return np.split(absolute, np.cumsum([int(t.sum()) for t in tfs[:-1]]))


def decode_columns(block: EncodedBlock) -> Columns:
    decoded = decode(block.first, block.count, block.postings)
    positions = absolute_positions(decoded.tfs, block.positions)
    return Columns(decoded.ids, decoded.tfs, decoded.lengths, positions, _unpack(block.conversations))


def decode_postings(block: EncodedBlock) -> list[Posting]:
    """The block back as postings."""
    return decode_columns(block).postings()


def chunk_columns(columns: Columns, size: int = BLOCK_SIZE) -> list[EncodedBlock]:
    """Postings (in document order) cut into full blocks, the last one possibly partial."""
    if len(columns) <= size:
        return [encode_columns(columns)]
    return [encode_columns(columns.slice(start, start + size)) for start in range(0, len(columns), size)]


def chunk(postings: Sequence[Posting], size: int = BLOCK_SIZE) -> list[EncodedBlock]:
    return chunk_columns(Columns.of(postings), size)


def postings_of(document: int, terms: Sequence[str], conversation: int = 0) -> dict[str, Posting]:
    """A document's posting for each of its distinct terms: positions are indexes in its term list."""
    where: dict[str, list[int]] = {}
    for position, term in enumerate(terms):
        where.setdefault(term, []).append(position)
    return {term: Posting(document, tuple(found), len(terms), conversation) for term, found in where.items()}


@dataclass(frozen=True, slots=True)
class Inverted:
    """Postings of many terms over a batch of documents, as flat lists: term i's postings are entries
    `pair_bounds[i]` to `pair_bounds[i + 1]` of ids, tfs and lengths, its positions start at `position_bounds[i]`."""

    terms: list[str]
    ids: list[int]
    tfs: list[int]
    lengths: list[int]
    positions: list[int]
    conversations: list[int]
    pair_bounds: list[int]
    position_bounds: list[int]

    def columns(self, i: int) -> Columns:
        start, stop = self.pair_bounds[i], self.pair_bounds[i + 1]
        return Columns(
            np.array(self.ids[start:stop], dtype=np.int64),
            np.array(self.tfs[start:stop], dtype=np.int64),
            np.array(self.lengths[start:stop], dtype=np.int64),
            np.array(self.positions[self.position_bounds[i] : self.position_bounds[i + 1]], dtype=np.int64),
            np.array(self.conversations[start:stop], dtype=np.int64),
        )

    def blocks(self, i: int) -> list[EncodedBlock]:
        """Term i's postings cut into blocks, straight from the lists."""
        out = []
        at = self.position_bounds[i]
        stop = self.pair_bounds[i + 1]
        for start in range(self.pair_bounds[i], stop, BLOCK_SIZE):
            end = min(start + BLOCK_SIZE, stop)
            tfs = self.tfs[start:end]
            used = sum(tfs)
            ids, lengths, owners = self.ids[start:end], self.lengths[start:end], self.conversations[start:end]
            out.append(encode_lists(ids, tfs, lengths, self.positions[at : at + used], owners))
            at += used
        return out


def invert(documents: Iterable[tuple[int, Sequence[str], int]]) -> Inverted:
    """Every term's postings over these (id, terms, conversation) documents, given in increasing id order.

    One pass numbering terms into a flat array, one stable sort by term, and the postings' boundaries found with
    array operations: a fold of many thousands of documents does no Python work per term or posting beyond the
    first pass and the encoding of blocks.
    """
    vocabulary: dict[str, int] = {}
    term_ids: list[int] = []
    lengths: list[int] = []
    document_ids: list[int] = []
    owners: list[int] = []
    for document, terms, conversation in documents:
        document_ids.append(document)
        owners.append(conversation)
        lengths.append(len(terms))
        term_ids.extend([vocabulary.setdefault(term, len(vocabulary)) for term in terms])
    if not term_ids:
        return Inverted([], [], [], [], [], [], [0], [0])
    count = len(term_ids)
    length_array = np.array(lengths, dtype=np.int64)
    owner = np.repeat(np.arange(len(lengths)), length_array)
    position = np.arange(count, dtype=np.int64) - np.repeat(np.cumsum(length_array) - length_array, length_array)
    order = np.argsort(np.array(term_ids, dtype=np.int64), kind="stable")  # stable: document, then position order
    tid = np.array(term_ids, dtype=np.int64)[order]
    owner, position = owner[order], position[order]
    # A posting is a run of equal (term, document); a term's postings are a run of equal term.
    pair_starts = np.flatnonzero(np.r_[True, (tid[1:] != tid[:-1]) | (owner[1:] != owner[:-1])])
    pair_tfs = np.diff(np.append(pair_starts, count))
    pair_owner = owner[pair_starts]
    pair_tid = tid[pair_starts]
    term_starts = np.flatnonzero(np.r_[True, pair_tid[1:] != pair_tid[:-1]])
    names = list(vocabulary)
    return Inverted(
        terms=[names[t] for t in pair_tid[term_starts].tolist()],
        ids=np.array(document_ids, dtype=np.int64)[pair_owner].tolist(),
        tfs=pair_tfs.tolist(),
        lengths=length_array[pair_owner].tolist(),
        positions=position.tolist(),
        conversations=np.array(owners, dtype=np.int64)[pair_owner].tolist(),
        pair_bounds=np.append(term_starts, len(pair_starts)).tolist(),
        position_bounds=np.append(pair_starts[term_starts], count).tolist(),
    )
