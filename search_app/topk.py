"""Exact top k over block postings, with dynamic pruning: MaxScore over per-block score bounds. Pure.

The query's positive clauses are words and phrases. A word's blocks are its postings' blocks; a phrase's are the
blocks of its rarest word (every document holding the phrase holds that word), its bound that block's bound
with the phrase's weight (the sum of its words' idf), since a phrase occurs at most as often as any of its words.

A block's potential is its own bound plus, for every other clause, the highest bound among that clause's blocks
of the same tenant overlapping its id range: no document of the block can score more. Blocks are visited by
decreasing potential and every document of a visited block is scored exactly (every clause; phrases from
positions), so the search stops at the first block whose potential is below the k-th score found. On top of
that, MaxScore: a clause whose bound, added to the bounds of all clauses weaker than it, is below the k-th score
cannot by itself bring a document into the top k, so its blocks are no longer visited, only probed for the
documents the other clauses' blocks bring. Ties are broken by document id, so a block whose potential equals the
k-th score is still visited.

Scores use search_app.bm25's formula with the same float operations in the same order (numpy float64 is IEEE
double as Python's float), so they equal the brute-force scores; bounds are compared with a relative margin
of 1e-9 so that summing them in another order can never prune a document that belongs in the top k.
"""

import heapq
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from search_app.blocks import DecodedBlock, Ints, absolute_positions_of
from search_app.bm25 import Bm25Params, Document, ScopeStats, excluded, idf, scorer
from search_app.query import Clause, ParsedQuery, Phrase, Term

_MARGIN = 1.0 + 1e-9
_LOOKAHEAD = 16
_SPAN = 1 << 32  # (document, position) as one integer: positions are below 2**32


def clause_terms(clause: Clause) -> tuple[str, ...]:
    """A word's or a phrase's words; prefixes expand to terms only known from documents, not ranked here."""
    if isinstance(clause, Term):
        return (clause.term,)
    if isinstance(clause, Phrase):
        return clause.terms
    raise ValueError(f"a prefix ({clause.prefix}*) is not ranked from blocks")


@dataclass(frozen=True, slots=True)
class BlockInfo:
    """What is known of a block before reading it: where it is, its id range and size, its frontier."""

    key: int
    tenant: int
    term: str
    first: int
    last: int
    count: int
    frontier_tfs: Ints
    frontier_lengths: Ints


class BlockReader(Protocol):
    def postings(self, keys: Collection[int]) -> dict[int, DecodedBlock]:
        """The decoded ids, tfs and lengths of these blocks (one read for all of them)."""
        ...

    def positions(self, keys: Collection[int]) -> dict[int, bytes]:
        """The packed positions payloads of these blocks."""
        ...


def norms(tfs: Ints, lengths: Ints, stats: ScopeStats, params: Bm25Params) -> np.ndarray:
    """bm25.tf_norm elementwise, with the same operations in the same order (0.0 where tf is 0)."""
    average = stats.average_length
    relative = lengths / average if average > 0 else np.zeros(len(lengths))
    tf = tfs.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = tf / (tf + params.k1 * (1.0 - params.b + params.b * relative))
    return np.where(tfs > 0, value, 0.0)


def phrase_frequency(positions: Sequence[Sequence[int]]) -> int:
    """Non-overlapping occurrences of consecutive positions (as search_app.bm25.phrase_frequency counts)."""
    starts = set(positions[0])
    for offset, where in enumerate(positions[1:], start=1):
        starts &= {position - offset for position in where}
        if not starts:
            return 0
    count, free = 0, -1
    for start in sorted(starts):
        if start >= free:
            count += 1
            free = start + len(positions)
    return count


@dataclass(slots=True)
class _Run:
    """One (tenant, term)'s blocks in id order (they do not overlap), with their bounds once weighted."""

    blocks: list[BlockInfo]
    firsts: Ints
    lasts: Ints

    @classmethod
    def of(cls, blocks: Iterable[BlockInfo]) -> "_Run":
        ordered = sorted(blocks, key=lambda block: block.first)
        firsts = np.array([b.first for b in ordered], dtype=np.int64)
        lasts = np.array([b.last for b in ordered], dtype=np.int64)
        return cls(ordered, firsts, lasts)

    def locate(self, ids: Ints) -> np.ndarray:
        """For each id, the index of the block whose range holds it, or -1."""
        if not self.blocks:
            return np.full(len(ids), -1)
        index = np.searchsorted(self.firsts, ids, side="right") - 1
        inside = (index >= 0) & (ids <= self.lasts[np.maximum(index, 0)])
        return np.where(inside, index, -1)


@dataclass(slots=True)
class _Driver:
    """The blocks that bring a clause's documents, per tenant, with each block's weighted bound."""

    clause: int
    runs: dict[int, _Run]
    bounds: dict[int, np.ndarray]
    best: float = 0.0


@dataclass(slots=True)
class _Search:
    query: ParsedQuery
    runs: dict[tuple[int, str], _Run]
    weights: dict[str, float]
    stats: ScopeStats
    params: Bm25Params
    reader: BlockReader
    skip: Collection[int]
    max_document: int | None
    decoded: dict[int, DecodedBlock] = field(default_factory=dict)
    positions: dict[int, tuple[Ints, Ints]] = field(default_factory=dict)
    """Per block: every document's positions one after the other, and where each document's start."""

    @classmethod
    def over(
        cls,
        query: ParsedQuery,
        blocks: Iterable[BlockInfo],
        df: dict[str, int],
        stats: ScopeStats,
        params: Bm25Params,
        reader: BlockReader,
        skip: Collection[int],
        max_document: int | None,
    ) -> "_Search":
        """A search of `blocks` (those starting past `max_document` left out), grouped into each tenant's run of
        each word, with each word's weight from its document frequency `df` over the whole scope."""
        grouped: dict[tuple[int, str], list[BlockInfo]] = {}
        for block in blocks:
            if max_document is None or block.first <= max_document:
                grouped.setdefault((block.tenant, block.term), []).append(block)
        runs = {key: _Run.of(found) for key, found in grouped.items()}
        weights = {term: idf(count, stats.documents) for term, count in df.items() if count > 0}
        return cls(query, runs, weights, stats, params, reader, skip, max_document)

    def tenants(self) -> list[int]:
        return sorted({tenant for tenant, _ in self.runs})

    def run(self, tenant: int, term: str) -> _Run:
        return self.runs.get((tenant, term)) or _Run([], np.zeros(0, np.int64), np.zeros(0, np.int64))

    def terms(self) -> list[str]:
        found: dict[str, None] = {}
        for clause in self.query.should + self.query.must_not:
            found.update(dict.fromkeys(clause_terms(clause)))
        return list(found)

    def load(self, keys: Iterable[int]) -> None:
        missing = {key for key in keys if key not in self.decoded}
        if missing:
            self.decoded.update(self.reader.postings(missing))

    def lookup(self, tenant: int, term: str, ids: Ints) -> tuple[Ints, Ints, Ints]:
        """tf of `term` in each document (0 where absent), and the block key and row of each present one.

        The blocks holding the ids are searched as one array (a term's blocks are in id order and do not overlap),
        not one by one."""
        run = self.run(tenant, term)
        where = run.locate(ids)
        tfs = np.zeros(len(ids), dtype=np.int64)
        keys = np.full(len(ids), -1, dtype=np.int64)
        rows = np.full(len(ids), -1, dtype=np.int64)
        used = np.unique(where[where >= 0])
        if not len(used):
            return tfs, keys, rows
        blocks = [self.decoded[run.blocks[index].key] for index in used.tolist()]
        every_id = np.concatenate([block.ids for block in blocks])
        every_tf = np.concatenate([block.tfs for block in blocks])
        base = np.cumsum([0] + [len(block.ids) for block in blocks[:-1]])
        block_keys = np.array([run.blocks[index].key for index in used.tolist()], dtype=np.int64)
        slot = np.searchsorted(used, where)  # where the located block is among those used (meaningless where -1)
        found = np.minimum(np.searchsorted(every_id, ids), len(every_id) - 1)
        hit = (where >= 0) & (every_id[found] == ids)
        tfs[hit] = every_tf[found[hit]]
        keys[hit] = block_keys[slot[hit]]
        rows[hit] = found[hit] - base[slot[hit]]
        return tfs, keys, rows

    def load_positions(self, keys: Iterable[int]) -> None:
        missing = [key for key in keys if key not in self.positions]
        if missing:
            payloads = self.reader.positions(missing)
            tfs = [self.decoded[key].tfs for key in missing]
            flats = absolute_positions_of(tfs, [payloads[key] for key in missing])
            for key, flat, counts in zip(missing, flats, tfs, strict=True):
                self.positions[key] = (flat, np.concatenate(([0], np.cumsum(counts))))

    def prefetch(self, batches: Iterable[tuple[int, Ints]]) -> None:
        """Read, in one go, every block that scoring these (tenant, ids) batches will probe."""
        keys: set[int] = set()
        for tenant, ids in batches:
            for term in self.terms():
                run = self.run(tenant, term)
                where = run.locate(ids)
                keys.update(run.blocks[i].key for i in np.unique(where[where >= 0]).tolist())
        self.load(keys)

    def gather(self, keys: Ints, rows: Ints, tfs: Ints) -> Ints:
        """The positions of the term in each (block key, row) document, `tfs[i]` of them for the i-th, one document
        after the other: from every block's positions put end to end, in one indexing (no loop over blocks)."""
        used, inverse = np.unique(keys, return_inverse=True)
        flats = [self.positions[key][0] for key in used.tolist()]
        starts = [self.positions[key][1] for key in used.tolist()]
        flat_base = np.cumsum([0] + [len(flat) for flat in flats[:-1]])
        start_base = np.cumsum([0] + [len(start) for start in starts[:-1]])
        begin = np.concatenate(starts)[start_base[inverse] + rows] + flat_base[inverse]
        index = np.repeat(begin - np.cumsum(tfs) + tfs, tfs) + np.arange(int(tfs.sum()))
        gathered: Ints = np.concatenate(flats)[index]
        return gathered

    def phrase_frequencies(self, clause: Phrase, found: dict[str, tuple[Ints, Ints, Ints]]) -> Ints:
        """Each document's frequency of the phrase, from positions, for all the documents at once: every (document,
        position - offset) of the phrase's i-th word, intersected over its words, gives where the phrase starts."""
        present = np.logical_and.reduce([found[term][0] > 0 for term in clause.terms])
        result = np.zeros(len(present), dtype=np.int64)
        docs = np.flatnonzero(present)
        if not docs.size:
            return result
        self.load_positions(np.unique(np.concatenate([found[t][1][docs] for t in clause.terms])).tolist())
        starts: Ints | None = None
        for offset, term in enumerate(clause.terms):
            tfs, keys, rows = (column[docs] for column in found[term])
            # Increasing: documents in order, each one's positions ascending.
            keyed = np.repeat(np.arange(len(docs)), tfs) * _SPAN + (self.gather(keys, rows, tfs) - offset)
            starts = keyed if starts is None else _common(starts, keyed)
        assert starts is not None  # noqa: S101 - a phrase has two words or more
        owner, where = starts // _SPAN, starts % _SPAN
        size = len(clause.terms)
        if not np.any((np.diff(where) < size) & (np.diff(owner) == 0)):
            result[docs] = np.bincount(owner, minlength=len(docs))
            return result
        # Occurrences closer than the phrase's length (a repeated word): counted without overlap, left to right.
        counts = [0] * len(docs)
        previous, free = -1, -1
        for doc, start in zip(owner.tolist(), where.tolist(), strict=True):
            if doc != previous:
                previous, free = doc, -1
            if start >= free:
                counts[doc] += 1
                free = start + size
        result[docs] = counts
        return result

    def score(self, tenant: int, ids: Ints, lengths: Ints) -> np.ndarray:
        """Exact scores of these documents (one tenant's), 0.0 for an excluded one."""
        self.prefetch([(tenant, ids)])
        found = {term: self.lookup(tenant, term, ids) for term in self.terms()}
        total = np.zeros(len(ids))
        for clause in self.query.should:
            if isinstance(clause, Term):
                if clause.term in self.weights:
                    weight = self.weights[clause.term]
                    total = total + weight * norms(found[clause.term][0], lengths, self.stats, self.params)
            elif isinstance(clause, Phrase) and all(term in self.weights for term in clause.terms):
                weight = sum((self.weights[term] for term in clause.terms), 0.0)
                frequencies = self.phrase_frequencies(clause, found)
                total = total + weight * norms(frequencies, lengths, self.stats, self.params)
        for unwanted in self.query.must_not:
            if isinstance(unwanted, Term):
                total = np.where(found[unwanted.term][0] > 0, 0.0, total)
            elif isinstance(unwanted, Phrase):
                total = np.where(self.phrase_frequencies(unwanted, found) > 0, 0.0, total)
        return total

    def score_each(
        self, tenant: int, blocks: Sequence[DecodedBlock], wanted: Callable[[Ints], np.ndarray]
    ) -> tuple[Ints, np.ndarray]:
        """Every document of `blocks` (one tenant's) that `wanted` keeps, once, scored: those scoring above 0.0,
        and their scores."""
        ids, first = np.unique(np.concatenate([block.ids for block in blocks]), return_index=True)
        lengths = np.concatenate([block.lengths for block in blocks])[first]
        keep = wanted(ids)
        ids, lengths = ids[keep], lengths[keep]
        if not len(ids):
            return ids, np.zeros(0)
        scores = self.score(tenant, ids, lengths)
        hit = scores > 0.0
        return ids[hit], scores[hit]


def _best_first(keys: list[Ints], values: list[np.ndarray]) -> tuple[Ints, np.ndarray]:
    all_keys, all_values = np.concatenate(keys), np.concatenate(values)
    order = np.lexsort((all_keys, -all_values))  # best first, ties by id
    return all_keys[order], all_values[order]


def _common(a: Ints, b: Ints) -> Ints:
    """The values of `a` also in `b`, both strictly increasing, as is the result: the shorter one searched in the
    other, without the sort of both together `np.intersect1d` does (most of a common phrase's time, profiled)."""
    if len(a) > len(b):
        a, b = b, a
    if not len(a):
        return a
    found = np.minimum(np.searchsorted(b, a), len(b) - 1)
    common: Ints = a[b[found] == a]
    return common


def _driver(search: _Search, index: int, clause: Clause, df: dict[str, int], tenants: Sequence[int]) -> _Driver:
    words = clause_terms(clause)
    # A phrase's documents all hold its rarest word: its blocks are the fewest to visit.
    term = min(words, key=lambda t: (df.get(t, 0), words.index(t)))
    weight = sum((search.weights[t] for t in words), 0.0) if all(t in search.weights for t in words) else 0.0
    runs: dict[int, _Run] = {}
    bounds: dict[int, np.ndarray] = {}
    for tenant in tenants:
        run = search.run(tenant, term)
        if not run.blocks or weight == 0:
            continue
        tfs = np.concatenate([b.frontier_tfs for b in run.blocks])
        lengths = np.concatenate([b.frontier_lengths for b in run.blocks])
        offsets = np.cumsum([0] + [len(b.frontier_tfs) for b in run.blocks[:-1]])
        maxima = np.maximum.reduceat(norms(tfs, lengths, search.stats, search.params), offsets)
        runs[tenant], bounds[tenant] = run, weight * maxima
    best = max((float(b.max()) for b in bounds.values()), default=0.0)
    return _Driver(index, runs, bounds, best)


def _overlap_maxima(driver: _Driver, tenant: int, firsts: Ints, lasts: Ints) -> np.ndarray:
    """For each id range [firsts[i], lasts[i]], the highest bound among `driver`'s blocks of `tenant` overlapping
    it (0.0 where none does): for every block of another clause at once."""
    run = driver.runs.get(tenant)
    if run is None:
        return np.zeros(len(firsts))
    low = np.searchsorted(run.lasts, firsts, side="left")
    high = np.searchsorted(run.firsts, lasts, side="right")
    return range_maxima(driver.bounds[tenant], low, high)


def range_maxima(values: np.ndarray, low: Ints, high: Ints) -> np.ndarray:
    """`values[low[i]:high[i]].max()` for each i, 0.0 where the range is empty, from a sparse table (the maxima of
    every run of 2**k values): two lookups per range instead of a slice and a reduction each."""
    out = np.zeros(len(low))
    size = high - low
    wanted = size > 0
    if not wanted.any():
        return out
    levels = [values]
    while 2 ** len(levels) <= int(size.max()):
        step = 2 ** (len(levels) - 1)
        levels.append(np.maximum(levels[-1][:-step], levels[-1][step:]))
    table = np.zeros((len(levels), len(values)))
    for power, level in enumerate(levels):
        table[power, : len(level)] = level
    start, size = low[wanted], size[wanted]
    powers = np.frexp(size)[1] - 1  # floor(log2(size)), exactly
    out[wanted] = np.maximum(table[powers, start], table[powers, start + size - 2**powers])
    return out


def top_k(
    query: ParsedQuery,
    blocks: Iterable[BlockInfo],
    df: dict[str, int],
    stats: ScopeStats,
    params: Bm25Params,
    reader: BlockReader,
    k: int,
    *,
    seeds: Iterable[tuple[int, float]] = (),
    skip: Collection[int] = (),
    max_document: int | None = None,
) -> list[tuple[int, float]]:
    """The best `k` (document id, score) of the blocks' documents and the `seeds` (documents scored elsewhere, the
    unfolded tail), best first, ties by id. `df` is each term's document frequency over the whole scope; `skip`
    holds deleted documents still in blocks; documents past `max_document` are left out."""
    search = _Search.over(query, blocks, df, stats, params, reader, skip, max_document)
    tenants = search.tenants()
    drivers = [_driver(search, i, clause, df, tenants) for i, clause in enumerate(query.should)]

    # The worst of the best k sits on top of a min-heap ordered by (score, -id).
    heap: list[tuple[float, int]] = []
    for key, value in seeds:
        _offer(heap, k, value, key)
    queue: list[tuple[float, int, int, int]] = []
    for driver in drivers:
        others = [d for d in drivers if d is not driver]
        for tenant, run in driver.runs.items():
            # The other clauses' bounds summed in clause order, then added to the block's own (as a loop per block
            # did: a fifth of a three-word search at a million messages, profiled).
            overlaps = np.zeros(len(run.blocks))
            for other in others:
                overlaps = overlaps + _overlap_maxima(other, tenant, run.firsts, run.lasts)
            potentials = driver.bounds[tenant] + overlaps
            queue.extend((-potential, driver.clause, tenant, j) for j, potential in enumerate(potentials.tolist()))
    queue.sort()
    ascending = sorted(drivers, key=lambda d: d.best)
    scored: set[int] = set()
    for at, (negative, clause, tenant, j) in enumerate(queue):
        threshold = heap[0][0] if len(heap) == k else -math.inf
        if -negative * _MARGIN < threshold:
            break
        if _non_essential(ascending, threshold, clause):
            continue
        block = drivers[clause].runs[tenant].blocks[j]
        if block.key not in search.decoded:
            # The next blocks in line are likely read too: one query for them and the blocks they probe.
            ahead = [(t, drivers[c].runs[t].blocks[i]) for _, c, t, i in queue[at : at + _LOOKAHEAD]]
            search.load(b.key for _, b in ahead)
            search.prefetch((t, search.decoded[b.key].ids) for t, b in ahead)
        decoded = search.decoded[block.key]
        keep = np.array(
            [
                d not in scored and d not in skip and (max_document is None or d <= max_document)
                for d in decoded.ids.tolist()
            ],
            dtype=bool,
        )
        if not keep.any():
            continue
        ids, lengths = decoded.ids[keep], decoded.lengths[keep]
        values = search.score(tenant, ids, lengths)
        for key, value in zip(ids.tolist(), values.tolist(), strict=True):
            scored.add(key)
            if value > 0.0:
                _offer(heap, k, value, key)
    return sorted(((key, value) for value, key in ((v, -n) for v, n in heap)), key=lambda item: (-item[1], item[0]))


def rank_all(
    query: ParsedQuery,
    blocks: Iterable[BlockInfo],
    df: dict[str, int],
    stats: ScopeStats,
    params: Bm25Params,
    reader: BlockReader,
    *,
    seeds: Iterable[tuple[int, float]] = (),
    skip: Collection[int] = (),
    max_document: int | None = None,
) -> list[tuple[int, float]]:
    """Every match of the blocks' documents and the `seeds`, ranked (what `top_k` answers for an unbounded k, the
    same scores in the same order), computed at once instead of block by block: for each tenant, every block of
    each positive clause's driving word (a phrase's rarest) is read in one go, and every document of them is
    scored in one call, the other words' blocks overlapping them probed in one more read, phrases verified from
    positions for all documents together. Without pruning there is nothing to gain from visiting blocks one at a
    time, and per block the fixed work (a read, a lookup, a phrase intersection) is what costs."""
    search = _Search.over(query, blocks, df, stats, params, reader, skip, max_document)
    unwanted = np.fromiter(skip, dtype=np.int64, count=len(skip))

    def live(ids: Ints) -> np.ndarray:
        keep = ~np.isin(ids, unwanted)
        return keep if max_document is None else keep & (ids <= max_document)

    keys, values = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    for seed_key, seed_value in seeds:
        keys.append(np.array([seed_key], dtype=np.int64))
        values.append(np.array([seed_value]))
    for tenant in search.tenants():
        driving: list[BlockInfo] = []
        for clause in query.should:
            words = clause_terms(clause)
            if not all(t in search.weights for t in words):
                continue  # a word no document of the scope holds: the clause matches nothing
            term = min(words, key=lambda t: (df.get(t, 0), words.index(t)))
            driving += search.run(tenant, term).blocks
        if not driving:
            continue
        search.load(block.key for block in driving)
        found, scores = search.score_each(tenant, [search.decoded[block.key] for block in driving], live)
        keys.append(found)
        values.append(scores)
    ranked_keys, ranked_values = _best_first(keys, values)
    return list(zip(ranked_keys.tolist(), ranked_values.tolist(), strict=True))


def _offer(heap: list[tuple[float, int]], k: int, value: float, key: int) -> None:
    item = (value, -key)
    if len(heap) < k:
        heapq.heappush(heap, item)
    elif item > heap[0]:
        heapq.heapreplace(heap, item)


def _non_essential(ascending: Sequence[_Driver], threshold: float, clause: int) -> bool:
    """Whether `clause` is among the weakest clauses whose bounds together stay below the threshold."""
    total = 0.0
    for driver in ascending:
        total += driver.best
        if total * _MARGIN >= threshold:
            return False
        if driver.clause == clause:
            return True
    return False


@dataclass(slots=True)
class _Loaded:
    """A BlockReader over blocks already read (with their positions, for phrases)."""

    decoded: dict[int, DecodedBlock]
    packed_positions: dict[int, bytes]

    def postings(self, keys: Collection[int]) -> dict[int, DecodedBlock]:
        return {key: self.decoded[key] for key in keys}

    def positions(self, keys: Collection[int]) -> dict[int, bytes]:
        return {key: self.packed_positions[key] for key in keys}


def rank_within(
    query: ParsedQuery,
    blocks: Sequence[tuple[BlockInfo, DecodedBlock]],
    positions: dict[int, bytes],
    inside: Callable[[DecodedBlock], np.ndarray],
    tail: Sequence[Document],
    stats: ScopeStats,
    params: Bm25Params,
    *,
    skip: Collection[int] = (),
    max_document: int | None = None,
) -> tuple[Ints, np.ndarray]:
    """Every match of a part of a tenant (a conversation, a run), ranked: their ids and scores, best first, ties by
    id (arrays: a page takes its window of them).

    `blocks` are the query's terms' blocks holding every document of the part (and others'), already read;
    `inside` says which documents of a block are the part's; `tail` holds the part's unfolded documents holding a
    query word, `skip` deleted documents still in blocks. df is counted over the part's live documents up to
    `max_document`, exactly; then every block is visited (no pruning: the part's matches are the ranking, and
    their number its count): every document of the part holding a positive clause's rarest word is scored at once,
    by the same code and float operations as `top_k` scores a block's.
    """
    every_term = list(dict.fromkeys(t for c in query.should + query.must_not for t in clause_terms(c)))
    df = dict.fromkeys(every_term, 0)
    unwanted = np.fromiter(skip, dtype=np.int64, count=len(skip))
    members = [np.zeros(0, dtype=np.int64)]
    for info, block in blocks:
        keep = inside(block) & ~np.isin(block.ids, unwanted)
        if max_document is not None:
            keep &= block.ids <= max_document
        df[info.term] = df.get(info.term, 0) + int(keep.sum())
        members.append(block.ids[keep])
    part = np.unique(np.concatenate(members))
    for document in tail:
        for term in every_term:
            if document.has(term):
                df[term] += 1
    score = scorer(query, {t: n for t, n in df.items() if n > 0}, stats, params)
    keys, values = [], []
    for document in tail:
        if not excluded(query, document):
            value = score(document)
            if value > 0.0:
                keys.append(document.key)
                values.append(value)
    found_keys = [np.array(keys, dtype=np.int64)]
    found_values = [np.array(values, dtype=np.float64)]
    reader = _Loaded({info.key: block for info, block in blocks}, positions)
    search = _Search.over(query, (info for info, _ in blocks), df, stats, params, reader, (), max_document)
    for tenant in search.tenants():
        driving: list[DecodedBlock] = []
        for clause in query.should:
            words = clause_terms(clause)
            term = min(words, key=lambda t: (df.get(t, 0), words.index(t)))
            driving += [reader.decoded[info.key] for info in search.run(tenant, term).blocks]
        if not driving:
            continue
        found, scores = search.score_each(tenant, driving, lambda ids: np.isin(ids, part))
        found_keys.append(found)
        found_values.append(scores)
    return _best_first(found_keys, found_values)
