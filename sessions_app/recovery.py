"""Exact transcript recovery from step snapshots (SPEC section 1).

Pure: pydantic-ai messages in, plain dataclasses out; no Django, no I/O, and pydantic-ai-harness is not
needed (its two summary recognizers are re-implemented here so the product runs without it).

Every agent step saves the whole live history. Compaction rewrites that live history, so a later snapshot
can lack messages an earlier one held. Recovery walks the snapshots of a conversation in write order and
keeps one *record*: every message the agent really produced, once, in order.

How a snapshot is merged (the reference, pydantic-ai-harness's `SnapshotHistorySource`, only looks for a
suffix of the record at the *start* of the snapshot; with `preserve_first_user_message=True` every compacted
snapshot starts with the first request instead, the overlap is found to be zero and the record doubles):

1. Summary artifacts (the summary a `SummarizingCompaction` writes) are split off and kept aside, flagged.
2. A compacted snapshot looks like `kept prefix + [summary] + suffix of the record + new messages`. We look
   for the longest block at the end of the run's logical history (its *lineage*) that occurs contiguously
   in the snapshot, ties going to the earliest position, and append only what follows that block. The
   search is one linear Z-function pass over the reversed hash sequences.
3. When no such block exists (a new run whose compaction dropped everything but the kept first request, a
   fork from an earlier point, a store whose early snapshots were pruned), the snapshot's leading messages
   that equal the lineage's leading messages are skipped, part by part so a first request that compaction
   split in two still matches, and the rest is appended.
4. Matched messages are replaced by the snapshot's copy: later copies carry fields stamped after the
   earlier snapshot was written.

A run that continues a conversation through `message_history` starts from the lineage (among earlier runs)
whose tail it repeats best, so inherited messages are not counted twice, while a genuinely repeated message
(the same "continue" prompt in two runs) is new content after the block and is kept. Only `complete`
snapshots contribute; `interrupted` ones are for inspection only. A pruned store yields what survives.

Messages are matched on `message_hash`, a content hash that ignores the fields pydantic-ai stamps later.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
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
    ToolReturnPart,
)

SUMMARY_METADATA_KEY = "pydantic-ai-harness.compaction.summary.v1"
"""`CompactionPart.metadata` key that marks a summary `SummarizingCompaction` wrote (harness 0.62)."""

LEGACY_SUMMARY_PREFIX = "Summary of previous conversation:\n\n"
"""How older `SummarizingCompaction` versions opened the summary system prompt they inserted.

The full literal, blank line included, as the harness matches it: a user-authored system prompt that merely
opens with the same sentence stays part of the transcript.
"""


@dataclass(frozen=True)
class SnapshotInput:
    seq: int  # write order within the run
    state: Literal["complete", "interrupted"]
    messages: Sequence[ModelMessage]


@dataclass(frozen=True)
class RunInput:
    run_id: str
    parent_run_id: str | None
    started_at: datetime
    snapshots: Sequence[SnapshotInput]


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
    return replace(message, timestamp=None, run_id=None, conversation_id=None)


def message_hash(message: ModelMessage) -> str:
    """SHA-256 of the message's `ModelMessagesTypeAdapter` JSON with later-stamped fields cleared."""
    return hashlib.sha256(ModelMessagesTypeAdapter.dump_json([_canonical(message)])).hexdigest()


def _part_key(part: ModelRequestPart) -> str:
    return message_hash(ModelRequest(parts=[part]))


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


def is_summary_artifact(message: ModelMessage) -> bool:
    """Whether `message` carries a compaction summary (possibly merged with real parts)."""
    return isinstance(message, ModelRequest) and any(is_summary_part(p) for p in message.parts)


def split_summary_artifact(message: ModelMessage) -> tuple[ModelRequest | None, ModelMessage | None]:
    """`(summary-only request or None, the rest or None)`.

    Continuing a history merges the summary's request with real turns next to it, so the split is by part.
    """
    if not is_summary_artifact(message):
        return None, message
    assert isinstance(message, ModelRequest)
    summary = [p for p in message.parts if is_summary_part(p)]
    rest = [p for p in message.parts if not is_summary_part(p)]
    return replace(message, parts=summary), (replace(message, parts=rest) if rest else None)


def without_summary_artifacts(messages: Iterable[ModelMessage]) -> list[ModelMessage]:
    """`messages` without summary parts; a request left with nothing else is dropped."""
    out: list[ModelMessage] = []
    for message in messages:
        _, rest = split_summary_artifact(message)
        if rest is not None:
            out.append(rest)
    return out


# --- history shape --------------------------------------------------------------------------------------

_PYDANTIC_AI_METADATA_KEY = "__pydantic_ai__"


def _tool_results_first(part: ModelRequestPart) -> int:
    return 0 if isinstance(part, ToolReturnPart | RetryPromptPart) else 1


def merge_adjacent_requests(messages: Iterable[ModelMessage]) -> list[ModelMessage]:
    """Adjacent requests merged into one, as pydantic-ai merges them when a history is loaded into a run.

    A run continued through `message_history` stores the merged request (a trailing tool result and the
    next user prompt become one message) where the earlier run stored two; recovery compares histories in
    the merged shape so both line up. Mirrors pydantic-ai's history cleaning: parts concatenated with tool
    results first, instructions kept when compatible, only the framework's own metadata namespace kept.
    """
    out: list[ModelMessage] = []
    for message in messages:
        last = out[-1] if out else None
        if (
            isinstance(message, ModelRequest)
            and isinstance(last, ModelRequest)
            and (not last.instructions or not message.instructions or last.instructions == message.instructions)
        ):
            parts = sorted([*last.parts, *message.parts], key=_tool_results_first)
            namespaces = [(m.metadata or {}).get(_PYDANTIC_AI_METADATA_KEY) for m in (last, message)]
            dicts = [n for n in namespaces if isinstance(n, dict)]
            metadata = {_PYDANTIC_AI_METADATA_KEY: {k: v for d in dicts for k, v in d.items()}} if dicts else None
            out[-1] = ModelRequest(
                parts=parts,
                instructions=last.instructions or message.instructions,
                timestamp=message.timestamp or last.timestamp,
                metadata=metadata,
                # pydantic-ai re-stamps a merged request when it runs; here nothing will, so keep the stamps.
                run_id=message.run_id or last.run_id,
                conversation_id=message.conversation_id or last.conversation_id,
            )
        else:
            out.append(message)
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


def _kept_prefix(
    lineage: Sequence[int], entries: Sequence[_Entry], messages: Sequence[ModelMessage], hashes: Sequence[str]
) -> tuple[list[tuple[int, int | None]], bool]:
    """Which lineage messages survive in a compacted snapshot's kept prefix, and whether the prefix is one.

    The prefix holds copies of a few early messages (the first request, possibly with its system prompt split
    off into a request of its own, or merged with a receipt) plus requests compaction wrote. A lineage
    message survives when an equal message follows the previous match, or, for a request, when its parts
    appear in order inside one snapshot request. The prefix is plausible when every message in it is such a
    copy or a request that answers no tool call.
    """
    matches: list[tuple[int, int | None]] = []
    exact: set[int] = set()
    # The prefix as a stream of parts, so a match can start inside a request that merged several messages
    # (the first request and a later prompt that compaction left next to it).
    stream: list[tuple[int, str | None]] = []
    starts: list[int] = []
    for i, message in enumerate(messages):
        starts.append(len(stream))
        if isinstance(message, ModelRequest) and message.parts:
            stream.extend((i, _part_key(p)) for p in message.parts)
        else:
            stream.append((i, None))
    stream_keys = {key for _, key in stream}
    indices_of: dict[str, list[int]] = {}
    for i, key in enumerate(hashes):
        indices_of.setdefault(key, []).append(i)
    cursor = 0
    for position in lineage:
        if cursor >= len(stream):
            break
        entry = entries[position]
        found = next((i for i in indices_of.get(entry.hash, ()) if starts[i] >= cursor), None)
        if found is not None:
            matches.append((position, found))
            exact.add(found)
            cursor = starts[found + 1] if found + 1 < len(messages) else len(stream)
            continue
        if not isinstance(entry.message, ModelRequest) or not entry.message.parts:
            continue
        if entry.part_keys()[0] not in stream_keys:
            continue
        wanted = entry.part_keys()
        for s in range(cursor, len(stream) - len(wanted) + 1):
            window = stream[s : s + len(wanted)]
            if [key for _, key in window] == wanted and window[0][0] == window[-1][0]:
                matches.append((position, None))
                cursor = s + len(wanted)
                break
    plausible = all(i in exact or _is_kept_prefix_request(m) for i, m in enumerate(messages))
    return matches, plausible


def _leading_match(
    lineage: Sequence[int], entries: Sequence[_Entry], messages: Sequence[ModelMessage], hashes: Sequence[str]
) -> tuple[list[tuple[int, int | None]], int]:
    """Walk `messages` against the lineage's leading messages: `(matches, messages used)`.

    Each match is `(lineage position, index of the equal message or None)`. A message matches on its hash,
    or part by part when compaction split one request in two (the summarizing compaction moves system
    prompts into a request of their own ahead of the kept first request); a lineage message split that way
    matches once all its parts were seen, and has no single equal copy (`None`). Messages that supplied only
    some parts of a lineage request are still used up: they are copies compaction re-wrote, not new content.
    """
    matches: list[tuple[int, int | None]] = []
    j = 0  # index into lineage
    pending: list[str] | None = None  # parts of lineage[j] not yet seen
    used = 0
    for i, message in enumerate(messages):
        if j >= len(lineage):
            break
        entry = entries[lineage[j]]
        if pending is None and hashes[i] == entry.hash:
            matches.append((lineage[j], i))
            j += 1
            used = i + 1
            continue
        if not (isinstance(message, ModelRequest) and isinstance(entry.message, ModelRequest)):
            break
        if pending is None:
            pending = list(entry.part_keys())
        keys = [_part_key(p) for p in message.parts]
        if not keys or pending[: len(keys)] != keys:
            break
        pending = pending[len(keys) :]
        used = i + 1
        if not pending:
            matches.append((lineage[j], None))
            j += 1
            pending = None
    return matches, used


# --- recovery --------------------------------------------------------------------------------------------


@dataclass
class _Entry:
    message: ModelMessage
    hash: str
    run_id: str
    _part_keys: list[str] | None = None

    def part_keys(self) -> list[str]:
        # Computed once per record entry: the kept-prefix check asks for them snapshot after snapshot.
        if self._part_keys is None:
            self._part_keys = [_part_key(p) for p in self.message.parts]  # type: ignore[arg-type]
        return self._part_keys


@dataclass
class _RunState:
    lineage: list[int] = field(default_factory=list)  # positions of the run's logical (uncompacted) history
    live: set[int] = field(default_factory=set)  # positions in its latest complete snapshot


@dataclass(frozen=True)
class _Alignment:
    """How a snapshot lines up with a lineage: the `(position, index)` pairs matched, where new content starts."""

    block: int  # length of the lineage tail found in the snapshot (0: none, leading match used)
    matches: list[tuple[int, int | None]]
    tail_from: int

    @property
    def score(self) -> tuple[int, int]:
        return (self.block, 0) if self.block else (0, len(self.matches))


def _is_kept_prefix_request(message: ModelMessage) -> bool:
    # What compaction puts ahead of the history tail it keeps, besides the first request: a standing system
    # prompt, receipts, kept user turns. All requests, and none answers a tool call.
    return isinstance(message, ModelRequest) and not any(
        isinstance(part, ToolReturnPart | RetryPromptPart) for part in message.parts
    )


def _align(
    lineage: list[int], entries: Sequence[_Entry], messages: Sequence[ModelMessage], hashes: list[str]
) -> _Alignment:
    """Line a snapshot up with a lineage (see the module docstring).

    Among the places a lineage tail occurs, the longest wins only if what precedes it in the snapshot can be
    a compaction's kept prefix (the lineage's leading messages, then only requests) and something follows it
    (each snapshot adds at least one model response). That rejects a block that is really new content
    repeating the tail (the same "continue" exchange twice).
    """
    lineage_hashes = [entries[p].hash for p in lineage]
    if lineage and hashes[: len(lineage)] == lineage_hashes and len(hashes) > len(lineage):
        # The common case, no compaction since the last snapshot: it extends the lineage.
        return _block_alignment(lineage, len(lineage), 0, [])
    blocks = tail_blocks(lineage_hashes, hashes)
    explained: list[_Alignment] = []
    for k, start in blocks:
        kept, plausible = _kept_prefix(lineage[: len(lineage) - k], entries, messages[:start], hashes[:start])
        if plausible:
            alignment = _block_alignment(lineage, k, start, kept)
            if alignment.tail_from < len(messages):
                return alignment
            explained.append(alignment)
    if explained:
        # Every snapshot after a model request adds at least that response; a block that leaves nothing new
        # is taken only when no other explanation exists.
        return explained[0]
    if blocks:
        k, start = blocks[0]
        kept, _ = _kept_prefix(lineage[: len(lineage) - k], entries, messages[:start], hashes[:start])
        return _block_alignment(lineage, k, start, kept)
    leading, used = _leading_match(lineage, entries, messages, hashes)
    return _Alignment(0, leading, used)


def _block_alignment(lineage: list[int], k: int, start: int, kept: list[tuple[int, int | None]]) -> _Alignment:
    block = lineage[len(lineage) - k :]
    return _Alignment(k, kept + [(position, start + offset) for offset, position in enumerate(block)], start + k)


def _choose_base(
    previous: Sequence[_RunState],
    entries: Sequence[_Entry],
    messages: Sequence[ModelMessage],
    hashes: list[str],
) -> tuple[list[int], _Alignment]:
    """For a run's first snapshot, the earlier lineage it continues, and how it aligns.

    Candidates are the earlier runs' lineages, most recent first: the first whose tail the snapshot repeats
    wins (a run continued through `message_history`); when none does, the longest leading match (a fork
    from an earlier point, or a continuation whose inherited tail compaction dropped); ties keep the most
    recent run. Stopping at the first tail found keeps a long thread linear in its number of runs.
    """
    best: tuple[list[int], _Alignment] = ([], _Alignment(0, [], 0))
    seen: set[tuple[int, ...]] = set()
    for state in reversed(previous):
        key = tuple(state.lineage[-1:]) + (len(state.lineage),)
        if key in seen:
            continue  # same lineage as a more recent run (e.g. a run that added nothing)
        seen.add(key)
        alignment = _align(state.lineage, entries, messages, hashes)
        if alignment.block:
            return state.lineage, alignment
        if alignment.score > best[1].score:
            best = (state.lineage, alignment)
    return best


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


def recover_conversation(runs: Sequence[RunInput]) -> list[RecoveredMessage]:
    """The conversation's exact record: transcript messages in order, summary artifacts interleaved.

    Runs are ordered by `(started_at, run_id)`, snapshots by `seq`. A summary artifact is placed where it
    first appeared: after the messages recorded before the snapshot that first carried it.
    """
    hash_of = _HashMemo()

    entries: list[_Entry] = []
    artifacts_before: dict[int, list[tuple[ModelRequest, str]]] = {}
    seen_artifacts: set[str] = set()
    states: dict[str, _RunState] = {}
    finished: list[_RunState] = []

    for run in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        for snapshot in sorted(run.snapshots, key=lambda s: s.seq):
            if snapshot.state != "complete":
                continue
            messages: list[ModelMessage] = []
            for message in merge_adjacent_requests(snapshot.messages):
                artifact, rest = split_summary_artifact(message)
                if artifact is not None:
                    key = message_hash(artifact)
                    if key not in seen_artifacts:
                        seen_artifacts.add(key)
                        artifacts_before.setdefault(len(entries), []).append((artifact, run.run_id))
                if rest is not None:
                    messages.append(rest)
            hashes = [hash_of(m) for m in messages]

            state = states.get(run.run_id)
            if state is None:
                lineage, alignment = _choose_base(finished, entries, messages, hashes)
                state = states[run.run_id] = _RunState()
                finished.append(state)
            else:
                lineage = state.lineage
                alignment = _align(lineage, entries, messages, hashes)

            if alignment.block:
                new_lineage = list(lineage)
            else:
                # No tail kept: a fork, or a start the store no longer holds; the lineage restarts from the
                # leading messages the snapshot shares with it.
                new_lineage = [position for position, _ in alignment.matches]
            for position, index in alignment.matches:
                if index is not None:
                    entries[position].message = messages[index]
            live = {position for position, _ in alignment.matches}
            tail_from = alignment.tail_from

            for index in range(tail_from, len(messages)):
                entries.append(_Entry(messages[index], hashes[index], run.run_id))
                new_lineage.append(len(entries) - 1)
                live.add(len(entries) - 1)
            state.lineage, state.live = new_lineage, live

    dropped: set[int] = set()
    for state in states.values():
        dropped.update(p for p in state.lineage if p not in state.live)

    out: list[RecoveredMessage] = []
    for position in range(len(entries) + 1):
        for artifact, run_id in artifacts_before.get(position, ()):
            out.append(RecoveredMessage(artifact, run_id, recovered_from_compaction=False, summary_artifact=True))
        if position < len(entries):
            entry = entries[position]
            out.append(RecoveredMessage(entry.message, entry.run_id, position in dropped, summary_artifact=False))
    return out


def transcript_only(recovered: Iterable[RecoveredMessage]) -> list[ModelMessage]:
    """The transcript proper: recovered messages without the summary artifacts kept aside."""
    return [r.message for r in recovered if not r.summary_artifact]
