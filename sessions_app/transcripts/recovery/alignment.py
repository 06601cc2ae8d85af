"""How a snapshot lines up with a run's lineage, and which earlier lineage a new run continues (pure).

The overlap search of recovery (see the package docstring, steps 2 and 3): lineage tails found in one Z-function
pass, leading messages walked part by part, copies of lineage requests inside a kept prefix. `RecoveryFold` keeps
the record (`Entry`) and each run's lineage (`RunState`); this module only reads them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart

from sessions_app.transcripts.recovery.hashing import part_key


@dataclass
class Entry:
    """One message of the record: its latest copy, its content hash and the run that first contributed it."""

    message: ModelMessage
    hash: str
    run_id: str
    _part_keys: list[str] | None = None

    def request_part_keys(self) -> list[str]:
        return self.part_keys() if isinstance(self.message, ModelRequest) else []

    def part_keys(self) -> list[str]:
        # Computed once per record entry: the kept-prefix check asks for them snapshot after snapshot. A response's
        # parts are keyed the same way (by their content hash), though `part_key` is typed for request parts.
        if self._part_keys is None:
            self._part_keys = [part_key(p) for p in self.message.parts]  # type: ignore[arg-type]  # see above
        return self._part_keys


@dataclass(eq=False)
class RunState:
    """A run as the fold knows it: its lineage (logical history) and what its latest snapshot still holds."""

    order: int  # when the run's first snapshot was folded: later runs are more recent
    lineage: list[int] = field(default_factory=list)  # positions of the run's logical (uncompacted) history
    live: set[int] = field(default_factory=set)  # positions in its latest complete snapshot


@dataclass(frozen=True)
class Alignment:
    """How a snapshot lines up with a lineage: the `(position, index)` pairs matched, where new content starts."""

    block: int  # length of the lineage tail found in the snapshot (0: none, leading match used)
    matches: list[tuple[int, int | None]]
    tail_from: int
    reached: int = 0  # without a tail: how many leading lineage messages the snapshot continues from
    copies: int = 0  # of the matches, lineage requests merely found again in a kept prefix (not walked in order)

    @property
    def score(self) -> tuple[int, int, int]:
        # With a tail: the alignment reaching furthest into the snapshot (the snapshot continues the lineage
        # that ends latest in it), then the longer tail. Without: the longer leading match.
        return (1, self.tail_from, self.block) if self.block else (0, len(self.matches), self.reached)


def _z_function(seq: Sequence[object]) -> list[int]:
    n = len(seq)
    z = [0] * n
    if n:
        z[0] = n
    left = right = 0
    for i in range(1, n):
        if i < right:
            z[i] = min(right - i, z[i - left])
        while i + z[i] < n and seq[z[i]] == seq[i + z[i]]:
            z[i] += 1
        if i + z[i] > right:
            left, right = i, i + z[i]
    return z


_SEPARATOR = object()


def tail_blocks(lineage: Sequence[str], snapshot: Sequence[str]) -> list[tuple[int, int]]:
    """Every place a tail of `lineage` occurs in `snapshot`, as `(k, start)`, longest first, then earliest.

    `(k, start)` means `lineage[-k:] == snapshot[start:start + k]`; for each end position only the longest
    such block is listed. Reversing both sequences turns "tail of lineage ending anywhere in snapshot" into
    "prefix of the reversed lineage starting anywhere in the reversed snapshot", which one Z-function pass
    answers in linear time.
    """
    if not lineage or not snapshot:
        return []
    pattern = list(reversed(lineage))
    text = list(reversed(snapshot))
    z = _z_function([*pattern, _SEPARATOR, *text])
    offset = len(pattern) + 1
    blocks = [(z[offset + i], len(snapshot) - i - z[offset + i]) for i in range(len(text)) if z[offset + i] > 0]
    return sorted(blocks, key=lambda block: (-block[0], block[1]))


def _leading_match(
    lineage: Sequence[int], entries: Sequence[Entry], messages: Sequence[ModelMessage], hashes: Sequence[str]
) -> tuple[list[tuple[int, int | None]], int, int]:
    """Walk `messages` against the lineage's leading messages: `(matches, messages used, lineage reached)`.

    Each match is `(lineage position, index of the equal message or None)`. The walk runs over parts, since
    compaction and history loading reshape the first requests: a system prompt split off into a request of
    its own, the kept first request merged with the next prompt. A response must be equal as a whole; a
    request matches when its parts come next, in order, across or inside the snapshot's requests (no single
    equal copy: `None`). A lineage request only partly there (its user prompt dropped, its system prompt
    kept) is *reached*, not matched: the snapshot continues from it. Snapshot messages are used up when all
    their parts were walked, or when the parts left over are copies of lineage requests (a prompt merged
    into the kept first request); what follows is new content.
    """
    stream: list[tuple[int, str]] = []  # (message index, part key or response hash)
    for i, message in enumerate(messages):
        if isinstance(message, ModelRequest):
            stream.extend((i, part_key(p)) for p in message.parts)
        else:
            stream.append((i, hashes[i]))
    matches: list[tuple[int, int | None]] = []
    t = 0
    reached = 0
    for position in lineage:
        entry = entries[position]
        if t >= len(stream):
            break
        if not isinstance(entry.message, ModelRequest):
            if isinstance(messages[stream[t][0]], ModelRequest) or stream[t][1] != entry.hash:
                break
            matches.append((position, stream[t][0]))
            t += 1
            reached += 1
            continue
        wanted = entry.part_keys()
        taken = 0
        while (
            taken < len(wanted)
            and t + taken < len(stream)
            and isinstance(messages[stream[t + taken][0]], ModelRequest)
            and stream[t + taken][1] == wanted[taken]
        ):
            taken += 1
        if taken == 0:
            break
        first_index = stream[t][0]
        t += taken
        reached += 1
        if taken < len(wanted):
            break  # reached, not all there
        exact = hashes[first_index] == entry.hash and stream[t - 1][0] == first_index
        matches.append((position, first_index if exact else None))
    # Used up: every message whose parts were all walked, and one partly walked whose leftover parts are
    # copies of lineage requests.
    if t >= len(stream):
        return matches, len(messages), reached
    used = stream[t][0]
    if t > 0 and stream[t - 1][0] == used:
        leftover = [key for index, key in stream[t:] if index == used]
        lineage_keys = {key for p in lineage for key in entries[p].request_part_keys()}
        if all(key in lineage_keys for key in leftover):
            used += 1
    return matches, used, reached


def align(
    lineage: list[int],
    entries: Sequence[Entry],
    messages: Sequence[ModelMessage],
    hashes: list[str],
    *,
    new_run: bool = False,
) -> Alignment:
    """Line a snapshot up with a lineage (see the module docstring).

    A place where a lineage tail occurs explains the snapshot when what precedes it can be a compaction's kept
    prefix: the lineage's own leading messages, walked in order (part by part), then only requests compaction
    writes (no tool results but copies of the lineage's). Of those, the one that accounts for the most of
    the lineage wins (fewest messages taken as dropped), provided something follows it: each snapshot adds at
    least one model response, and a new run its prompt. That rejects a block that is really new content
    repeating the tail (the same "continue" exchange twice) and a kept tail that merely recurs early (the
    same short answer twice). With no such place, the longest tail is taken as is (a new run still needs
    something after it); with no tail at all, the leading messages the snapshot repeats are skipped.
    """
    if lineage and len(hashes) > len(lineage) and hashes[: len(lineage)] == [entries[p].hash for p in lineage]:
        # The common case, no compaction since the last snapshot: it extends the lineage.
        return _block_alignment(lineage, len(lineage), 0, [])
    # A tail found in the snapshot is no longer than the snapshot: only that much of the lineage is compared, so a
    # compacted thread's step costs its snapshot, not its history.
    blocks = tail_blocks([entries[p].hash for p in lineage[-len(hashes) :]], hashes) if hashes else []
    lineage_keys: set[str] | None = None
    best: tuple[tuple[int, int], Alignment] | None = None
    for k, start in blocks:
        kept, used, reached = _leading_match(lineage[: len(lineage) - k], entries, messages[:start], hashes[:start])
        rest = messages[used:start]
        if any(not isinstance(m, ModelRequest) for m in rest):
            continue
        answers = [part_key(p) for m in rest for p in m.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if answers:
            if lineage_keys is None:
                lineage_keys = {key for position in lineage for key in entries[position].request_part_keys()}
            if not all(key in lineage_keys for key in answers):
                continue
        alignment = _block_alignment(lineage, k, start, kept)
        adds = alignment.tail_from < len(messages)
        if new_run and not adds:
            continue
        rank = (int(adds), reached + k)
        if best is None or rank > best[0]:
            best = (rank, alignment)
    if best is not None:
        alignment = best[1]
        before = lineage[: len(lineage) - alignment.block]
        start = alignment.tail_from - alignment.block
        extra = _copies_in_prefix(before, entries, messages[:start], alignment.matches)
        return replace(alignment, matches=alignment.matches + extra) if extra else alignment
    if blocks:
        k, start = blocks[0]
        if not (new_run and start + k == len(messages)):
            kept, _, _ = _leading_match(lineage[: len(lineage) - k], entries, messages[:start], hashes[:start])
            return _block_alignment(lineage, k, start, kept)
    leading, used, reached = _leading_match(lineage, entries, messages, hashes)
    copies = _copies_in_prefix(lineage, entries, messages[:used], leading)
    return Alignment(0, leading + copies, used, reached, copies=len(copies))


def _copies_in_prefix(
    lineage: Sequence[int],
    entries: Sequence[Entry],
    prefix: Sequence[ModelMessage],
    matches: list[tuple[int, int | None]],
) -> list[tuple[int, int | None]]:
    """Lineage requests still present in a kept prefix beyond the leading walk, as `(position, None)`.

    History loading merges the kept first request with the next prompt, so a prompt can survive inside
    another request: every part of it still there, not used up by the walk's matches. Only for
    `recovered_from_compaction`; the record itself does not change.
    """
    spare = Counter(part_key(p) for m in prefix if isinstance(m, ModelRequest) for p in m.parts)
    matched = {position for position, _ in matches}
    for position in matched:
        spare.subtract(entries[position].request_part_keys())
    found: list[tuple[int, int | None]] = []
    if not any(count > 0 for count in spare.values()):
        return found
    for position in reversed(lineage):
        if position in matched or not isinstance(entries[position].message, ModelRequest):
            continue
        keys = entries[position].part_keys()
        if not keys or spare[keys[0]] <= 0:
            continue
        wanted = Counter(keys)
        if wanted and all(spare[key] >= count for key, count in wanted.items()):
            spare.subtract(wanted)
            found.append((position, None))
    return found


def _block_alignment(lineage: list[int], k: int, start: int, kept: list[tuple[int, int | None]]) -> Alignment:
    block = lineage[len(lineage) - k :]
    return Alignment(k, kept + [(position, start + offset) for offset, position in enumerate(block)], start + k)


def choose_base(
    previous: Sequence[RunState],
    entries: Sequence[Entry],
    messages: Sequence[ModelMessage],
    hashes: list[str],
    *,
    candidates: Callable[[], Sequence[RunState]] | None = None,
    tails_from: Callable[[int], Sequence[RunState]] | None = None,
) -> tuple[RunState | None, Alignment]:
    """For a run's first snapshot, the earlier run whose lineage it continues, and how it aligns.

    Candidates are the earlier runs' lineages, most recent first. The one whose tail ends furthest into the
    snapshot wins (a run continued through `message_history` repeats its parent's whole history, which holds
    every ancestor's lineage too, and a later run's tail can recur by chance, such as the same short answer);
    without any tail, the longest leading match (a fork from an earlier point, or a continuation whose
    inherited tail compaction dropped); ties keep the most recent run.

    Found by lookup, not by a scan of every earlier run: `candidates()` (most recent first) are the only
    lineages that can align with anything (see `RecoveryFold._candidates`). Without `tails_from`, they are all
    that is considered (a snapshot made by one run continues one of them or none). With it, the most recent
    lineage counts even with nothing matched (compaction may have rewritten what it shares), and once it
    aligned with a tail ending at `t`, only `tails_from(t)` can beat it: the lineages whose last message occurs
    in the snapshot at index `t` or later, since a tail of a lineage ends at an occurrence of its last message.
    Without `candidates`, every lineage is aligned (tests compare the lookups with that).
    """
    best: tuple[RunState, Alignment] | None = None
    seen: set[tuple[int, ...]] = set()
    last_index = {key: index for index, key in enumerate(hashes)}

    def consider(state: RunState) -> None:
        nonlocal best
        key = tuple(state.lineage[-1:]) + (len(state.lineage),)
        if key in seen:
            return  # the same lineage as a more recent run
        seen.add(key)
        if best is not None and best[1].block and state.lineage:
            # None ending before the best alignment's end can beat it.
            if last_index.get(entries[state.lineage[-1]].hash, -1) + 1 <= best[1].tail_from:
                return
        alignment = align(state.lineage, entries, messages, hashes, new_run=True)
        # Even with nothing matched, the most recent run's alignment counts: it may have used up leading
        # messages compaction rewrote (a system prompt split off the first request).
        if best is None or alignment.score > best[1].score:
            best = (state, alignment)

    if candidates is not None and tails_from is None:
        for state in candidates():
            consider(state)
    elif candidates is not None and tails_from is not None and previous:
        consider(previous[-1])
        # The first lineage considered is always aligned: nothing was seen or beaten before it.
        recent = cast("tuple[RunState, Alignment]", best)
        for state in tails_from(recent[1].tail_from) if recent[1].block else candidates():
            consider(state)
    else:
        for state in reversed(previous):
            consider(state)
    return best or (None, Alignment(0, [], 0))
