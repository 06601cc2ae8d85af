"""Recovery as a fold over a conversation's snapshots in recovery order (pure; the algorithm: the package docstring).

Plain dataclasses in and out: `RunInput` and `SnapshotInput` in, `RecoveredMessage` (the record) and `FoldChange`
(what one more snapshot changed) out. No Django, no I/O.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse

from sessions_app.transcripts.recovery.alignment import Alignment, Entry, RunState, align, choose_base
from sessions_app.transcripts.recovery.hashing import HashMemo, caching_part_keys, message_hash, part_key
from sessions_app.transcripts.recovery.summary_artifacts import split_summary_artifact


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


def _enter[K](lookup: dict[K, dict[int, RunState]], key: K, state: RunState, remove: bool) -> None:
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
        self._hash_of = HashMemo()
        self._part_keys: dict[int, tuple[object, str]] = {}
        self.entries: list[Entry] = []
        self._artifacts_before: dict[int, list[tuple[ModelRequest, str]]] = {}
        self._seen_artifacts: set[str] = set()
        self._states: dict[str, RunState] = {}
        self._finished: list[RunState] = []
        # A position is dropped (recovered from compaction) when some run's lineage holds it and that run's live
        # history lacks it. Snapshots come in recovery order, so every run but the current (last) one is done:
        # their drops only ever grow, kept as one set, and the current run's own drops are kept apart.
        self._done_drops: set[int] = set()
        self._current: RunState | None = None
        self._current_drops: set[int] = set()  # the current run's drops that are not already done drops
        self.last_run: str | None = None
        self.snapshots_folded = 0
        # Lookups that find the lineages a run's first snapshot can continue without a scan of every run:
        # by the hash of a lineage's last message, and by its first message (a request's part keys).
        self._by_last: dict[str, dict[int, RunState]] = {}
        self._by_opening: dict[tuple[str, ...], dict[int, RunState]] = {}
        self._opening_lengths: Counter[int] = Counter()
        self.filter_candidates = True  # tests compare with False: every lineage aligned
        self.extend_whole_record = True  # tests compare with False: every snapshot aligned as in general

    def apply(self, run_id: str, state: str, snapshot: Sequence[ModelMessage]) -> FoldChange:
        with caching_part_keys(self._part_keys):
            return self._apply(run_id, state, snapshot)

    def _apply(self, run_id: str, state: str, snapshot: Sequence[ModelMessage]) -> FoldChange:
        self.snapshots_folded += 1
        self.last_run = run_id
        entries = self.entries
        before = len(entries)
        if state != "complete":
            return FoldChange(before, frozenset(), {}, ())
        # A snapshot that repeats the whole record (the very objects) and adds to it: only what it adds is looked at.
        inherited = self._whole_record_repeated(run_id, snapshot) if self.extend_whole_record else 0
        messages: list[ModelMessage] = list(snapshot[:inherited])
        hashes: list[str] = [entry.hash for entry in entries] if inherited else []
        artifacts: list[RecoveredMessage] = []
        for message in snapshot[inherited:]:
            if isinstance(message, ModelRequest) and not message.parts:
                # pydantic-ai empties an orphan tool result's request in place; nothing is left to record.
                continue
            if (known := self._hash_of.held(message)) is not None:
                # A message an earlier snapshot gave (a store's shared object): split before, so no artifact is
                # in it. Splitting every message of a 1,000-message history again was over a quarter of its fold.
                messages.append(message)
                hashes.append(known)
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
                hashes.append(self._hash_of(rest))

        if inherited and len(messages) > inherited and self._continued_alone(run_id, hashes[inherited:-1]):
            return self._extend(run_id, messages[inherited:], hashes[inherited:], tuple(artifacts))

        run_state = self._states.get(run_id)
        if run_state is None:
            one_run = _made_by_one_run(messages)
            base: RunState | None
            if not self.filter_candidates:
                base, alignment = choose_base(self._finished, entries, messages, hashes)
            else:
                base, alignment = choose_base(
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
                base, alignment = None, Alignment(0, [], 0)
            lineage = base.lineage if base is not None else []
            self._done_drops |= self._current_drops  # the run before is done
            self._current_drops = set()
            run_state = self._states[run_id] = self._current = RunState(order=len(self._finished))
            self._finished.append(run_state)
        elif run_state is not self._current:
            raise ValueError(f"run {run_id!r} is done: a snapshot of it after a later run's is out of recovery order")
        else:
            base, lineage = None, run_state.lineage
            alignment = align(lineage, entries, messages, hashes)

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
            entries.append(Entry(messages[index], hashes[index], run_id))
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

    def _whole_record_repeated(self, run_id: str, snapshot: Sequence[ModelMessage]) -> int:
        """The record's length when the snapshot opens with every message of the record, the very objects in order,
        and holds more, and the current run's lineage is the whole record, all of it live; else 0. Its run is the
        current run or a new one."""
        current, length = self._current, len(self.entries)
        if current is None or not length or len(snapshot) <= length or len(current.live) != length:
            return 0
        if self._states.get(run_id, current) is not current or current.lineage != list(range(length)):
            return 0
        if not all(map(operator.is_, snapshot[:length], [entry.message for entry in self.entries])):
            return 0
        return length

    def _continued_alone(self, run_id: str, inner_hashes: Sequence[str]) -> bool:
        """Whether a snapshot repeating the whole record continues the current run's lineage and no other: its own
        run's, or for a new run's first snapshot, no other lineage ends inside what it adds (before its last
        message), where its tail would reach further into the snapshot (`choose_base`)."""
        return run_id in self._states or all(state is self._current for state in self._ending_in(inner_hashes))

    def _extend(
        self, run_id: str, added: Sequence[ModelMessage], hashes: Sequence[str], artifacts: tuple[RecoveredMessage, ...]
    ) -> FoldChange:
        """`_apply` for a snapshot that repeats the whole record and continues the current run's lineage: what
        alignment would find (the record as a block, nothing replaced, nothing dropped) without walking it."""
        before = len(self.entries)
        run_state = self._states.get(run_id)
        if run_state is None:
            self._done_drops |= self._current_drops  # the run before is done
            self._current_drops = set()
            run_state = self._states[run_id] = self._current = RunState(order=len(self._finished))
            self._finished.append(run_state)
        self.entries.extend(Entry(message, key, run_id) for message, key in zip(added, hashes, strict=True))
        self._index(run_state, remove=True)
        run_state.lineage, run_state.live = list(range(len(self.entries))), set(range(len(self.entries)))
        self._index(run_state)
        return FoldChange(before, frozenset(), {}, artifacts)

    def _opening(self, lineage: Sequence[int]) -> tuple[str, ...]:
        entry = self.entries[lineage[0]]
        return tuple(entry.part_keys()) if isinstance(entry.message, ModelRequest) else ("response", entry.hash)

    def _index(self, state: RunState, *, remove: bool = False) -> None:
        """Enter `state` in the lookups by its lineage's last and first messages (or take it out)."""
        if not state.lineage:
            return
        opening = self._opening(state.lineage)
        _enter(self._by_last, self.entries[state.lineage[-1]].hash, state, remove)
        _enter(self._by_opening, opening, state, remove)
        if opening[0] != "response":
            self._opening_lengths[len(opening)] += -1 if remove else 1

    def _ending_in(self, hashes: Sequence[str]) -> list[RunState]:
        """The lineages whose last message is one of `hashes`, most recent first."""
        found: dict[int, RunState] = {}
        for key in set(hashes):
            found.update(self._by_last.get(key, {}))
        return [found[order] for order in sorted(found, reverse=True)]

    def _candidates(self, messages: Sequence[ModelMessage], hashes: Sequence[str]) -> list[RunState]:
        """The earlier lineages a new run's first snapshot can align with, most recent first: only a lineage
        whose last message is in the snapshot can give a tail, and only one whose first request's parts open the
        snapshot (or whose first message is the snapshot's first response) a leading match. Any other walks
        nothing of the snapshot: for a snapshot made by one run (its own first message on) that means a run of
        its own, and for any other it cannot beat the most recent lineage, which `choose_base` always aligns.

        A new run's tail must be followed by something (its prompt, at least): a lineage whose last message
        occurs only as the snapshot's last (runs that all end with the same answer) cannot give one, so it is no
        candidate, and a conversation of many such runs does not align each new run against all of them."""
        found: dict[int, RunState] = {state.order: state for state in self._ending_in(hashes[:-1])}
        opening: list[str] = []
        for message in messages:
            if not isinstance(message, ModelRequest):
                break
            opening.extend(part_key(part) for part in message.parts)
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
