"""Exact transcript recovery from step snapshots (SPEC section 1).

Pure: pydantic-ai messages in, plain dataclasses out; no Django, no I/O, and pydantic-ai-harness is not
needed (its two summary recognizers are re-implemented here so the product runs without it).

Every agent step saves the whole live history. Compaction rewrites that live history, so a later snapshot
can lack messages an earlier one held. Recovery walks the snapshots of a conversation in write order and
keeps one *record*: every message the agent really produced, once, in order.

How a snapshot is merged (the reference, pydantic-ai-harness's `SnapshotHistorySource`, only looks for a
suffix of the record at the *start* of the snapshot; with `preserve_first_user_message=True` every compacted
snapshot starts with the first request instead, the overlap is found to be zero and the record doubles):

1. Compaction artifacts (the summary a `SummarizingCompaction` writes, the receipt a compaction with
   `receipts=True` leaves) are split off by part and kept aside, flagged; a request pydantic-ai emptied in
   place (an orphan result it dropped) is skipped.
2. Each run keeps a *lineage*: the record positions of its logical, uncompacted history. A compacted
   snapshot looks like `kept prefix + [summary] + a tail of the lineage + new messages`. Every place a
   lineage tail occurs in the snapshot is found in one Z-function pass over the reversed hash sequences; a
   place counts when what precedes it walks the lineage's leading messages (part by part: compaction splits
   the first request, history loading merges it with the next prompt) followed only by requests compaction
   writes, and something follows it. The place accounting for most of the lineage wins; what follows it is
   appended.
3. When no tail occurs (a run whose compaction dropped all it inherited but the first request, a fork from
   an earlier point, a store whose early snapshots were pruned), the leading messages the snapshot repeats
   are skipped and the rest is appended.
4. Matched messages are replaced by the snapshot's copy: later copies carry fields stamped after the
   earlier snapshot was written.

A run's first snapshot continues the earlier lineage whose tail ends furthest into it (a run continued through
`message_history`), else the one whose beginning it shares most (a fork). Inherited messages are therefore
not counted twice, while a genuinely repeated message (the same "continue" exchange in two runs) is new
content after the tail and is kept. Those lineages are found by lookup (by their last and first messages), never
by a scan of every earlier run, so a new run costs the same in a conversation of 10 runs or 5,000. A run whose
first message it stamped itself and that walks nothing of an earlier lineage is a run of its own. Only
`complete` snapshots contribute; `interrupted` ones are for
inspection only. A pruned store yields what survives, never an error.

Messages are matched on `message_hash`, a content hash that ignores the fields pydantic-ai stamps later.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from pydantic_ai.messages import (
    CompactionPart,
    InstructionBaselinePart,
    InstructionDeltaPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    ToolReturnPart,
    UserPromptPart,
)

SUMMARY_METADATA_KEY = "pydantic-ai-harness.compaction.summary.v1"
"""`CompactionPart.metadata` key that marks a summary `SummarizingCompaction` wrote (harness 0.62)."""

RECEIPT_METADATA = "pydantic-ai-harness.compaction.receipt.v1"
"""`TextContent.metadata` marking the receipt a compaction with `receipts=True` leaves (harness 0.62)."""

LEGACY_SUMMARY_PREFIX = "Summary of previous conversation:\n\n"
"""How older `SummarizingCompaction` versions opened the summary system prompt they inserted.

The full literal, blank line included, as the harness matches it: a user-authored system prompt that merely
opens with the same sentence stays part of the transcript.
"""


@dataclass(frozen=True)
class SnapshotInput:
    seq: int  # order within the run: the harness's step (then arrival), never arrival alone
    state: Literal["complete", "interrupted"]
    messages: Sequence[ModelMessage]


@dataclass(frozen=True)
class RunInput:
    run_id: str
    parent_run_id: str | None
    started_at: datetime
    snapshots: Sequence[SnapshotInput]
    arrival: int = 0  # breaks ties of started_at: when the run's first snapshot arrived (never its id)


@dataclass(frozen=True)
class RecoveredMessage:
    message: ModelMessage  # the latest stored copy of the message (carries fields stamped later)
    run_id: str  # the run that first contributed it
    recovered_from_compaction: bool  # absent from the live history of the last complete snapshot of a run
    #                                  whose logical history holds it: only the snapshots recovered it
    summary_artifact: bool  # a compaction summary kept aside (not part of the transcript proper)


# --- hashing ---------------------------------------------------------------------------------------------


def _canonical(message: ModelMessage) -> ModelMessage:
    # pydantic-ai stamps timestamp, run_id and conversation_id (and fills `instructions`, appends
    # instruction delta/baseline parts) after the snapshot that first carries a message was written, so
    # those are cleared; every other field, part timestamps included, stays in the key. Same rule as the
    # harness's `SnapshotHistorySource`, so our hashes equal its hashes.
    if isinstance(message, ModelRequest):
        parts = [p for p in message.parts if not isinstance(p, InstructionDeltaPart | InstructionBaselinePart)]
        return replace(message, parts=parts, timestamp=None, run_id=None, conversation_id=None, instructions=None)
    # A response's timestamp is declared non-optional, but the hash must not see when it was stamped.
    return replace(message, timestamp=None, run_id=None, conversation_id=None)  # type: ignore[arg-type]  # see above


def message_hash(message: ModelMessage) -> str:
    """SHA-256 of the message's `ModelMessagesTypeAdapter` JSON with later-stamped fields cleared."""
    return hashlib.sha256(ModelMessagesTypeAdapter.dump_json([_canonical(message)])).hexdigest()


_PART_KEYS: ContextVar[dict[int, tuple[object, str]] | None] = ContextVar("recovery_part_keys", default=None)
"""Per-call cache of part keys: the part-by-part walks look at the same kept prefix once per candidate
alignment. Keyed by identity and holding the part, so an id cannot be reused while the call runs."""


def _part_key(part: ModelRequestPart) -> str:
    cache = _PART_KEYS.get()
    if cache is not None:
        cached = cache.get(id(part))
        if cached is not None:
            return cached[1]
    key = message_hash(ModelRequest(parts=[part]))
    if cache is not None:
        cache[id(part)] = (part, key)
    return key


# --- summary artifacts -----------------------------------------------------------------------------------


def is_summary_part(part: ModelRequestPart | ModelResponsePart) -> bool:
    """Whether `part` is a compaction summary: the harness's marked `CompactionPart` or a legacy summary.

    A `CompactionPart` an application or a provider wrote itself (provider data, an id) is ordinary content.
    """
    if isinstance(part, CompactionPart):
        return (
            part.metadata is not None
            and part.metadata.get(SUMMARY_METADATA_KEY) is True
            and part.provider_name is None
            and part.id is None
            and part.provider_details is None
            and bool(part.content)
        )
    return isinstance(part, SystemPromptPart) and part.content.startswith(LEGACY_SUMMARY_PREFIX)


def is_receipt_part(part: ModelRequestPart | ModelResponsePart) -> bool:
    """Whether `part` is the receipt a compaction with `receipts=True` left ("[History before this point...").

    Marked by metadata on a text item of a `UserPromptPart`, invisible to the model (harness 0.62).
    """
    return (
        isinstance(part, UserPromptPart)
        and not isinstance(part.content, str)
        and any(isinstance(item, TextContent) and item.metadata == RECEIPT_METADATA for item in part.content)
    )


def _is_artifact_part(part: ModelRequestPart) -> bool:
    return is_summary_part(part) or is_receipt_part(part)


def is_summary_artifact(message: ModelMessage) -> bool:
    """Whether `message` carries a compaction summary or receipt (possibly merged with real parts).

    Both are written by compaction about the conversation, not by its participants: kept aside, never part of
    the transcript proper.
    """
    return isinstance(message, ModelRequest) and any(_is_artifact_part(p) for p in message.parts)


def split_summary_artifact(message: ModelMessage) -> tuple[ModelRequest | None, ModelMessage | None]:
    """`(summary-only request or None, the rest or None)`.

    Continuing a history merges the summary's request with real turns next to it, so the split is by part.
    """
    if not is_summary_artifact(message):
        return None, message
    assert isinstance(message, ModelRequest)
    summary = [p for p in message.parts if _is_artifact_part(p)]
    rest = [p for p in message.parts if not _is_artifact_part(p)]
    return replace(message, parts=summary), (replace(message, parts=rest) if rest else None)


def without_summary_artifacts(messages: Iterable[ModelMessage]) -> list[ModelMessage]:
    """`messages` without summary and receipt parts; a request left with nothing else is dropped."""
    out: list[ModelMessage] = []
    for message in messages:
        _, rest = split_summary_artifact(message)
        if rest is not None:
            out.append(rest)
    return out


# --- overlap search --------------------------------------------------------------------------------------


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
    lineage: Sequence[int], entries: Sequence[_Entry], messages: Sequence[ModelMessage], hashes: Sequence[str]
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
            stream.extend((i, _part_key(p)) for p in message.parts)
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


# --- recovery --------------------------------------------------------------------------------------------


@dataclass
class _Entry:
    message: ModelMessage
    hash: str
    run_id: str
    _part_keys: list[str] | None = None

    def request_part_keys(self) -> list[str]:
        return self.part_keys() if isinstance(self.message, ModelRequest) else []

    def part_keys(self) -> list[str]:
        # Computed once per record entry: the kept-prefix check asks for them snapshot after snapshot. A response's
        # parts are keyed the same way (by their content hash), though `_part_key` is typed for request parts.
        if self._part_keys is None:
            self._part_keys = [_part_key(p) for p in self.message.parts]  # type: ignore[arg-type]  # see above
        return self._part_keys


@dataclass(eq=False)
class _RunState:
    order: int  # when the run's first snapshot was folded: later runs are more recent
    lineage: list[int] = field(default_factory=list)  # positions of the run's logical (uncompacted) history
    live: set[int] = field(default_factory=set)  # positions in its latest complete snapshot


@dataclass(frozen=True)
class _Alignment:
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


def _align(
    lineage: list[int],
    entries: Sequence[_Entry],
    messages: Sequence[ModelMessage],
    hashes: list[str],
    *,
    new_run: bool = False,
) -> _Alignment:
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
    best: tuple[tuple[int, int], _Alignment] | None = None
    for k, start in blocks:
        kept, used, reached = _leading_match(lineage[: len(lineage) - k], entries, messages[:start], hashes[:start])
        rest = messages[used:start]
        if any(not isinstance(m, ModelRequest) for m in rest):
            continue
        answers = [_part_key(p) for m in rest for p in m.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
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
    return _Alignment(0, leading + copies, used, reached, copies=len(copies))


def _copies_in_prefix(
    lineage: Sequence[int],
    entries: Sequence[_Entry],
    prefix: Sequence[ModelMessage],
    matches: list[tuple[int, int | None]],
) -> list[tuple[int, int | None]]:
    """Lineage requests still present in a kept prefix beyond the leading walk, as `(position, None)`.

    History loading merges the kept first request with the next prompt, so a prompt can survive inside
    another request: every part of it still there, not used up by the walk's matches. Only for
    `recovered_from_compaction`; the record itself does not change.
    """
    spare = Counter(_part_key(p) for m in prefix if isinstance(m, ModelRequest) for p in m.parts)
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


def _block_alignment(lineage: list[int], k: int, start: int, kept: list[tuple[int, int | None]]) -> _Alignment:
    block = lineage[len(lineage) - k :]
    return _Alignment(k, kept + [(position, start + offset) for offset, position in enumerate(block)], start + k)


def _choose_base(
    previous: Sequence[_RunState],
    entries: Sequence[_Entry],
    messages: Sequence[ModelMessage],
    hashes: list[str],
    *,
    candidates: Callable[[], Sequence[_RunState]] | None = None,
    tails_from: Callable[[int], Sequence[_RunState]] | None = None,
) -> tuple[_RunState | None, _Alignment]:
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
    best: tuple[_RunState, _Alignment] | None = None
    seen: set[tuple[int, ...]] = set()
    last_index = {key: index for index, key in enumerate(hashes)}

    def consider(state: _RunState) -> None:
        nonlocal best
        key = tuple(state.lineage[-1:]) + (len(state.lineage),)
        if key in seen:
            return  # the same lineage as a more recent run
        seen.add(key)
        if best is not None and best[1].block and state.lineage:
            # None ending before the best alignment's end can beat it.
            if last_index.get(entries[state.lineage[-1]].hash, -1) + 1 <= best[1].tail_from:
                return
        alignment = _align(state.lineage, entries, messages, hashes, new_run=True)
        # Even with nothing matched, the most recent run's alignment counts: it may have used up leading
        # messages compaction rewrote (a system prompt split off the first request).
        if best is None or alignment.score > best[1].score:
            best = (state, alignment)

    if candidates is not None and tails_from is None:
        for state in candidates():
            consider(state)
    elif candidates is not None and tails_from is not None and previous:
        consider(previous[-1])
        assert best is not None
        for state in tails_from(best[1].tail_from) if best[1].block else candidates():
            consider(state)
    else:
        for state in reversed(previous):
            consider(state)
    return best or (None, _Alignment(0, [], 0))


class _HashMemo:
    """`message_hash` paid once per distinct message, not once per snapshot that repeats it.

    Serializing is most of recovery's cost, and every snapshot repeats the history before it. A store that
    shares message objects between snapshots (Sessiondesk's own, content-addressed) hits on identity; the
    harness's stores deep-copy each snapshot, so copies are found by a cheap fingerprint and confirmed with
    dataclass equality, which compares every serialized field. Cached objects are held, so ids stay unique.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[ModelMessage, str]] = {}
        self._by_fingerprint: dict[tuple[object, ...], list[tuple[ModelMessage, str]]] = {}

    @staticmethod
    def _fingerprint(message: ModelMessage) -> tuple[object, ...]:
        first = message.parts[0] if message.parts else None
        content = getattr(first, "content", None)
        return (
            type(message),
            len(message.parts),
            type(first),
            getattr(first, "tool_call_id", None),
            getattr(first, "timestamp", None),
            len(content) if isinstance(content, str) else None,
            # A response's timestamp is set when it is created; a request's may be stamped later.
            message.timestamp if isinstance(message, ModelResponse) else None,
        )

    def __call__(self, message: ModelMessage) -> str:
        cached = self._by_id.get(id(message))
        if cached is not None:
            return cached[1]
        fingerprint = self._fingerprint(message)
        candidates = self._by_fingerprint.setdefault(fingerprint, [])
        key = next((key for other, key in reversed(candidates) if other == message), None)
        if key is None:
            key = message_hash(message)
            candidates.append((message, key))
        self._by_id[id(message)] = (message, key)
        return key


def _made_by_one_run(messages: Sequence[ModelMessage]) -> bool:
    return bool(messages) and messages[0].run_id is not None and messages[0].run_id == messages[-1].run_id


def recover_conversation(runs: Sequence[RunInput]) -> list[RecoveredMessage]:
    """The conversation's exact record: transcript messages in order, summary artifacts interleaved.

    Runs are ordered by `(started_at, arrival)` (the run id only breaks ties among inputs without an arrival),
    snapshots by `seq`. A summary artifact is placed where it first appeared: after the messages recorded before
    the snapshot that first carried it.
    """
    fold = RecoveryFold()
    for run in sorted(runs, key=run_order):
        for snapshot in sorted(run.snapshots, key=lambda s: s.seq):
            fold.apply(run.run_id, snapshot.state, snapshot.messages)
    return fold.recovered()


def run_order(run: RunInput) -> tuple[datetime, int, str]:
    return (run.started_at, run.arrival, run.run_id)


@dataclass(frozen=True)
class FoldChange:
    """What folding one more snapshot changed in the record, so a stored transcript can follow it row by row.

    `appended_from` is the record's length before the snapshot: positions from there on are new. `replaced`
    are earlier positions now holding a later copy of their message (the same content hash, perhaps other
    bytes). `flags` are positions whose `recovered_from_compaction` changed, with the new value. `artifacts`
    are summary artifacts seen for the first time, placed before position `appended_from`.
    """

    appended_from: int
    replaced: frozenset[int]
    flags: dict[int, bool]
    artifacts: tuple[RecoveredMessage, ...]


def _enter[K](lookup: dict[K, dict[int, _RunState]], key: K, state: _RunState, remove: bool) -> None:
    if not remove:
        lookup.setdefault(key, {})[state.order] = state
        return
    del lookup[key][state.order]
    if not lookup[key]:
        del lookup[key]


class RecoveryFold:
    """Recovery as a fold over snapshots in order: `recover_conversation` feeds it every snapshot from scratch,
    and a store that keeps a fold can feed it only the next snapshot, getting the same record.

    A snapshot may be applied only in recovery order: after every snapshot of its run and of every run before
    it. The caller checks that (`last_run`, `snapshots_folded`); anything else needs a fold from scratch.
    """

    def __init__(self) -> None:
        self._hash_of = _HashMemo()
        self._part_keys: dict[int, tuple[object, str]] = {}
        self.entries: list[_Entry] = []
        self._artifacts_before: dict[int, list[tuple[ModelRequest, str]]] = {}
        self._seen_artifacts: set[str] = set()
        self._states: dict[str, _RunState] = {}
        self._finished: list[_RunState] = []
        # A position is dropped (recovered from compaction) when some run's lineage holds it and that run's live
        # history lacks it. Snapshots come in recovery order, so every run but the current (last) one is done:
        # their drops only ever grow, kept as one set, and the current run's own drops are kept apart.
        self._done_drops: set[int] = set()
        self._current: _RunState | None = None
        self._current_drops: set[int] = set()  # the current run's drops that are not already done drops
        self.last_run: str | None = None
        self.snapshots_folded = 0
        # Lookups that find the lineages a run's first snapshot can continue without a scan of every run:
        # by the hash of a lineage's last message, and by its first message (a request's part keys).
        self._by_last: dict[str, dict[int, _RunState]] = {}
        self._by_opening: dict[tuple[str, ...], dict[int, _RunState]] = {}
        self._opening_lengths: Counter[int] = Counter()
        self.filter_candidates = True  # tests compare with False: every lineage aligned

    def apply(self, run_id: str, state: str, snapshot: Sequence[ModelMessage]) -> FoldChange:
        token = _PART_KEYS.set(self._part_keys)
        try:
            return self._apply(run_id, state, snapshot)
        finally:
            _PART_KEYS.reset(token)

    def _apply(self, run_id: str, state: str, snapshot: Sequence[ModelMessage]) -> FoldChange:
        self.snapshots_folded += 1
        self.last_run = run_id
        entries = self.entries
        before = len(entries)
        if state != "complete":
            return FoldChange(before, frozenset(), {}, ())
        messages: list[ModelMessage] = []
        artifacts: list[RecoveredMessage] = []
        for message in snapshot:
            if isinstance(message, ModelRequest) and not message.parts:
                # pydantic-ai empties an orphan tool result's request in place; nothing is left to record.
                continue
            artifact, rest = split_summary_artifact(message)
            if artifact is not None:
                key = message_hash(artifact)
                if key not in self._seen_artifacts:
                    self._seen_artifacts.add(key)
                    self._artifacts_before.setdefault(before, []).append((artifact, run_id))
                    artifacts.append(RecoveredMessage(artifact, run_id, False, summary_artifact=True))
            if rest is not None:
                messages.append(rest)
        hashes = [self._hash_of(m) for m in messages]

        run_state = self._states.get(run_id)
        if run_state is None:
            one_run = _made_by_one_run(messages)
            base: _RunState | None
            if not self.filter_candidates:
                base, alignment = _choose_base(self._finished, entries, messages, hashes)
            else:
                base, alignment = _choose_base(
                    self._finished,
                    entries,
                    messages,
                    hashes,
                    candidates=lambda: self._candidates(messages, hashes),
                    tails_from=None if one_run else lambda t: self._ending_in(hashes[t:-1]),
                )
            if not alignment.block and len(alignment.matches) == alignment.copies and one_run:
                # Nothing of an earlier lineage is walked in the snapshot (at most a shared system prompt, or a
                # request found again in it), and pydantic-ai stamped its first message with the same run as
                # its last: a run of its own (the same agent started afresh), not a continuation whose
                # compaction left only the first request.
                base, alignment = None, _Alignment(0, [], 0)
            lineage = base.lineage if base is not None else []
            self._done_drops |= self._current_drops  # the run before is done
            self._current_drops = set()
            run_state = self._states[run_id] = self._current = _RunState(order=len(self._finished))
            self._finished.append(run_state)
        elif run_state is not self._current:
            raise ValueError(f"run {run_id!r} is done: a snapshot of it after a later run's is out of recovery order")
        else:
            base, lineage = None, run_state.lineage
            alignment = _align(lineage, entries, messages, hashes)

        if alignment.block:
            new_lineage = list(lineage)
        else:
            # No tail kept: a fork from an earlier point, a run whose compaction dropped all it inherited
            # (but the first request it preserves, or part of it), or a start the store no longer holds.
            # Sharing more than the first request is a fork: the lineage continues from what is shared.
            # Sharing at most the first request is what compaction leaves of a continuation, so the run
            # continues the whole lineage, and the next run is still compared with the real beginning.
            new_lineage = list(lineage[: alignment.reached] if alignment.reached > 1 else lineage)
        replaced: set[int] = set()
        for position, index in alignment.matches:
            if index is not None and entries[position].message is not messages[index]:
                entries[position].message = messages[index]
                replaced.add(position)
        live = {position for position, _ in alignment.matches}
        for index in range(alignment.tail_from, len(messages)):
            entries.append(_Entry(messages[index], hashes[index], run_id))
            new_lineage.append(len(entries) - 1)
            live.add(len(entries) - 1)

        if lineage is run_state.lineage and (alignment.block or alignment.reached <= 1):
            # The run's lineage only grew: a position it held changes for it only where its liveness changed
            # (what is appended is live), so the step costs its snapshot, not the run's history.
            now_dropped = run_state.live - live
            now_live = {p for p in live - run_state.live if p < before}
        elif base is not None:
            # A new run inherits a prefix of a done run's lineage, every position of which is live for that run
            # or already a done drop: only the done run's live positions can be new drops, so a run continuing
            # a long compacted thread costs its base's live history, not the thread. Lineages ascend.
            inherited = len(new_lineage) - (len(messages) - alignment.tail_from)
            last = new_lineage[inherited - 1] if inherited else -1
            now_dropped = {p for p in base.live if p <= last and p not in live}
            now_live = set()
        else:
            old_dropped = {p for p in run_state.lineage if p not in run_state.live}
            new_dropped = {p for p in new_lineage if p not in live}
            now_dropped, now_live = new_dropped - old_dropped, old_dropped - new_dropped
        self._index(run_state, remove=True)
        run_state.lineage, run_state.live = new_lineage, live
        self._index(run_state)
        # New positions are written whole; of the earlier ones, only those whose flag really changed.
        flags: dict[int, bool] = {}
        done, current = self._done_drops, self._current_drops
        for position in now_live:
            if position in current:
                current.discard(position)
                if position < before:
                    flags[position] = False
        for position in now_dropped:
            if position not in done and position not in current:
                current.add(position)
                if position < before:
                    flags[position] = True
        return FoldChange(before, frozenset(replaced), flags, tuple(artifacts))

    def _opening(self, lineage: Sequence[int]) -> tuple[str, ...]:
        entry = self.entries[lineage[0]]
        return tuple(entry.part_keys()) if isinstance(entry.message, ModelRequest) else ("response", entry.hash)

    def _index(self, state: _RunState, *, remove: bool = False) -> None:
        """Enter `state` in the lookups by its lineage's last and first messages (or take it out)."""
        if not state.lineage:
            return
        opening = self._opening(state.lineage)
        _enter(self._by_last, self.entries[state.lineage[-1]].hash, state, remove)
        _enter(self._by_opening, opening, state, remove)
        if opening[0] != "response":
            self._opening_lengths[len(opening)] += -1 if remove else 1

    def _ending_in(self, hashes: Sequence[str]) -> list[_RunState]:
        """The lineages whose last message is one of `hashes`, most recent first."""
        found: dict[int, _RunState] = {}
        for key in set(hashes):
            found.update(self._by_last.get(key, {}))
        return [found[order] for order in sorted(found, reverse=True)]

    def _candidates(self, messages: Sequence[ModelMessage], hashes: Sequence[str]) -> list[_RunState]:
        """The earlier lineages a new run's first snapshot can align with, most recent first: only a lineage
        whose last message is in the snapshot can give a tail, and only one whose first request's parts open the
        snapshot (or whose first message is the snapshot's first response) a leading match. Any other walks
        nothing of the snapshot: for a snapshot made by one run (its own first message on) that means a run of
        its own, and for any other it cannot beat the most recent lineage, which `_choose_base` always aligns.

        A new run's tail must be followed by something (its prompt, at least): a lineage whose last message
        occurs only as the snapshot's last (runs that all end with the same answer) cannot give one, so it is no
        candidate, and a conversation of many such runs does not align each new run against all of them."""
        found: dict[int, _RunState] = {state.order: state for state in self._ending_in(hashes[:-1])}
        opening: list[str] = []
        for message in messages:
            if not isinstance(message, ModelRequest):
                break
            opening.extend(_part_key(part) for part in message.parts)
        keys = {tuple(opening[:n]) for n, count in self._opening_lengths.items() if count and 0 < n <= len(opening)}
        if messages and isinstance(messages[0], ModelResponse):
            keys.add(("response", hashes[0]))
        for key in keys:
            found.update(self._by_opening.get(key, {}))
        return [found[order] for order in sorted(found, reverse=True)]

    def dropped(self, position: int) -> bool:
        return position in self._done_drops or position in self._current_drops

    def recovered(self) -> list[RecoveredMessage]:
        out: list[RecoveredMessage] = []
        entries = self.entries
        for position in range(len(entries) + 1):
            for artifact, run_id in self._artifacts_before.get(position, ()):
                out.append(RecoveredMessage(artifact, run_id, recovered_from_compaction=False, summary_artifact=True))
            if position < len(entries):
                entry = entries[position]
                out.append(
                    RecoveredMessage(entry.message, entry.run_id, self.dropped(position), summary_artifact=False)
                )
        return out


def transcript_only(recovered: Iterable[RecoveredMessage]) -> list[ModelMessage]:
    """The transcript proper: recovered messages without the summary artifacts kept aside."""
    return [r.message for r in recovered if not r.summary_artifact]
