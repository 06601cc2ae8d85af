"""Runs as a timeline: the run tree, each run's model steps and the tool calls they made. Pure: no Django.

Facts come from what is already stored: each message's pydantic-ai JSON (ModelMessagesTypeAdapter form, read as
plain dicts: a response's `usage`, `model_name` and `timestamp`; request part timestamps) and the harness's
tool-effect ledger (when a tool call started and ended). A step is one model response: it starts when the
request before it was made (its latest part timestamp) and ends at the response's timestamp. A run starts at its
first message (the stored `started_at` only when its messages carry no time), and runs nest by `parent_run_id`.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from model_messages.serialization import iso_datetime

MAX_DEPTH = 6  # deeper runs are drawn at this indent (the tree itself is kept)


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def add(self, other: "Usage") -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass(frozen=True)
class RunFacts:
    pk: int
    run_id: str
    parent_run_id: str
    agent_name: str
    state: str
    started_at: datetime
    finished_at: datetime | None = None


@dataclass(frozen=True)
class EffectFacts:
    tool_call_id: str
    tool_name: str
    status: str
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True)
class ReviewFacts:
    """An approval review (`approval_review`: decision `approve` or `ask`) or a judgement (`judge`: its verdict)
    of one tool call, from the harness's OTLP span."""

    kind: str
    decision: str
    confidence: float | None
    model_result: str
    started_at: datetime | None
    ended_at: datetime | None

    @property
    def seconds(self) -> float | None:
        return _seconds(self.started_at, self.ended_at)


class _Timed:
    """Something with a start and an end: its `seconds` (None when either is unknown or they are out of order)."""

    started_at: datetime | None
    ended_at: datetime | None

    @property
    def seconds(self) -> float | None:
        return _seconds(self.started_at, self.ended_at)


@dataclass
class ToolSpan(_Timed):
    tool_name: str
    tool_call_id: str
    status: str  # the ledger's status, else "returned", "retry" or "no result"
    started_at: datetime | None = None
    ended_at: datetime | None = None
    result_position: int | None = None
    reviews: Sequence[ReviewFacts] = ()  # approval reviews and judgements of the call
    anchor: str = ""  # an interrupted call only a snapshot holds: its in-place mark on the conversation page


@dataclass(frozen=True)
class InterruptedCall:
    """A call the run made and never got a result for, held only by an interrupted snapshot (so no transcript
    message carries it): the timeline lists it under its run, linked to its in-place mark."""

    run_id: str
    tool_name: str
    anchor: str
    effect: EffectFacts | None = None  # the ledger's entry for it, when the harness wrote one


@dataclass
class Step(_Timed):
    position: int
    model_name: str
    started_at: datetime | None
    ended_at: datetime | None
    usage: Usage
    tools: list[ToolSpan] = field(default_factory=list)


@dataclass
class RunTimeline(_Timed):
    run: RunFacts
    started_at: datetime
    ended_at: datetime | None
    steps: list[Step] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    children: list["RunTimeline"] = field(default_factory=list)
    depth: int = 0
    interrupted: list[ToolSpan] = field(default_factory=list)  # calls only an interrupted snapshot holds

    @property
    def models(self) -> list[str]:
        return sorted({s.model_name for s in self.steps if s.model_name})

    @property
    def open_ended(self) -> bool:
        """Still "running" with no end recorded: its last known time may be far from its work (a part stamped
        when it was stored, or a run left open for months), so the waterfall clips it and marks it."""
        return self.run.state == "running" and self.run.finished_at is None

    @property
    def work_ended_at(self) -> datetime:
        """The end of what the run is known to have done: its steps, tool calls and reviews; its start if none."""
        ends = [self.started_at]
        for step in self.steps:
            ends.extend(t for t in (step.ended_at, step.started_at) if t is not None)
            for tool in step.tools:
                ends.extend(t for t in (tool.ended_at, tool.started_at) if t is not None)
                ends.extend(t for r in tool.reviews for t in (r.ended_at, r.started_at) if t is not None)
        ends.extend(t for tool in self.interrupted for t in (tool.ended_at, tool.started_at) if t is not None)
        return max(ends)

    @property
    def axis_end(self) -> datetime:
        """Where the run's own scale ends: its end, or for an open-ended run the end of its known work."""
        if self.open_ended or self.ended_at is None:
            return self.work_ended_at
        return max(self.ended_at, self.started_at)

    def bar(self, start: datetime | None, end: datetime | None, scale: int = 1000) -> tuple[int, int]:
        """Where a step, tool call or review sits on its run's own time axis (each run scaled to itself, so a
        run's 7-s steps stay readable beside a run hours long)."""
        return _place(self.started_at, self.axis_end, start, end, scale)


@dataclass
class ConversationTimeline:
    runs: list[RunTimeline]  # depth-first, parents before their children, siblings by start
    started_at: datetime | None
    ended_at: datetime | None
    usage: Usage
    step_count: int
    # The end of the conversation's time axis: its runs' ends, open-ended runs counted to their known work only.
    axis_end: datetime | None = None

    def bar(self, start: datetime | None, end: datetime | None, scale: int = 1000) -> tuple[int, int]:
        """Where a span sits on the conversation's time axis, as (x, width) in 0..scale (width at least 1); a span
        past the axis end (an open-ended run) is clipped at it."""
        if self.started_at is None:
            return 0, 0
        return _place(self.started_at, self.axis_end or self.ended_at or self.started_at, start, end, scale)

    @property
    def open_runs(self) -> int:
        return sum(1 for run in self.runs if run.open_ended)

    @property
    def axis_seconds(self) -> float | None:
        """The conversation's duration on its clipped axis (open-ended runs up to their known work)."""
        return _seconds(self.started_at, self.axis_end)


def _place(
    axis_start: datetime, axis_end: datetime, start: datetime | None, end: datetime | None, scale: int
) -> tuple[int, int]:
    if start is None:
        return 0, 0
    span = (axis_end - axis_start).total_seconds() or 1.0
    x = round((start - axis_start).total_seconds() / span * scale)
    x = min(max(x, 0), scale - 1)
    width = round(((end or start) - start).total_seconds() / span * scale)
    return x, max(1, min(width, scale - x))


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None or end < start:
        return None
    return (end - start).total_seconds()


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input=int(raw.get("input_tokens") or 0),
        output=int(raw.get("output_tokens") or 0),
        cache_read=int(raw.get("cache_read_tokens") or 0),
        cache_write=int(raw.get("cache_write_tokens") or 0),
    )


def _request_time(message: Mapping[str, Any]) -> datetime | None:
    times = [t for t in (iso_datetime(p.get("timestamp")) for p in message.get("parts") or ()) if t is not None]
    stamped = iso_datetime(message.get("timestamp"))
    if stamped is not None:
        times.append(stamped)
    return max(times) if times else None


_CALL_KINDS = ("tool-call", "builtin-tool-call")
_RETURN_KINDS = ("tool-return", "builtin-tool-return", "retry-prompt")


def build_timeline(
    runs: Sequence[RunFacts],
    messages: Iterable[tuple[int, str, Mapping[str, Any]]],
    effects: Mapping[str, EffectFacts],
    reviews: Mapping[str, Sequence[ReviewFacts]] | None = None,
    interrupted: Sequence[InterruptedCall] = (),
) -> ConversationTimeline:
    """The timeline of one conversation from its runs, its messages as (position, run_id, message JSON) in
    transcript order, the tool-effect ledger by tool_call_id, the calls' reviews and judgements by it, and the
    interrupted calls no message holds."""
    reviews = reviews or {}
    timelines = {r.run_id: RunTimeline(run=r, started_at=r.started_at, ended_at=r.finished_at) for r in runs}
    first_seen: dict[str, datetime] = {}
    last_seen: dict[str, datetime] = {}
    open_calls: dict[str, ToolSpan] = {}
    last_request_time: dict[str, datetime | None] = {}
    for position, run_id, message in messages:
        timeline = timelines.get(run_id)
        if timeline is None:
            continue
        if message.get("kind") == "response":
            ended = iso_datetime(message.get("timestamp"))
            step = Step(
                position=position,
                model_name=str(message.get("model_name") or ""),
                started_at=last_request_time.get(run_id),
                ended_at=ended,
                usage=_usage(message.get("usage")),
            )
            for part in message.get("parts") or ():
                if part.get("part_kind") in _CALL_KINDS:
                    call_id = str(part.get("tool_call_id") or "")
                    effect = effects.get(call_id)
                    span = ToolSpan(str(part.get("tool_name") or ""), call_id, "no result")
                    span.reviews = reviews.get(call_id, ()) if call_id else ()
                    if effect is not None:
                        span.status, span.started_at, span.ended_at = effect.status, effect.started_at, effect.ended_at
                    step.tools.append(span)
                    open_calls[call_id] = span
            timeline.steps.append(step)
            timeline.usage.add(step.usage)
            moment = ended
        else:
            moment = _request_time(message)
            last_request_time[run_id] = moment
            for part in message.get("parts") or ():
                if part.get("part_kind") in _RETURN_KINDS:
                    span_or_none = open_calls.pop(str(part.get("tool_call_id") or ""), None)
                    if span_or_none is not None:
                        span_or_none.result_position = position
                        if span_or_none.status == "no result":
                            kind = part.get("part_kind")
                            span_or_none.status = "retry" if kind == "retry-prompt" else "returned"
        if moment is not None:
            first_seen.setdefault(run_id, moment)
            first_seen[run_id] = min(first_seen[run_id], moment)
            last_seen[run_id] = max(last_seen.get(run_id, moment), moment)
    for call in interrupted:
        owner = timelines.get(call.run_id)
        if owner is not None:
            span = ToolSpan(call.tool_name, "", "interrupted", anchor=call.anchor)
            if call.effect is not None:
                span.started_at, span.ended_at = call.effect.started_at, call.effect.ended_at
            owner.interrupted.append(span)
    for run_id, timeline in timelines.items():
        if run_id in first_seen:
            timeline.started_at = first_seen[run_id]
            ends = [t for t in (last_seen[run_id], timeline.run.finished_at) if t is not None]
            timeline.ended_at = max(ends)
    roots: list[RunTimeline] = []
    for timeline in sorted(timelines.values(), key=lambda t: (t.started_at, t.run.run_id)):
        parent = timelines.get(timeline.run.parent_run_id) if timeline.run.parent_run_id else None
        (parent.children if parent is not None and parent is not timeline else roots).append(timeline)
    ordered: list[RunTimeline] = []

    def visit(timeline: RunTimeline, depth: int, seen: set[str]) -> None:
        if timeline.run.run_id in seen:  # a cycle of parent ids: show each run once
            return
        seen.add(timeline.run.run_id)
        timeline.depth = min(depth, MAX_DEPTH)
        ordered.append(timeline)
        for child in timeline.children:
            visit(child, depth + 1, seen)

    seen: set[str] = set()
    for root in roots:
        visit(root, 0, seen)
    for timeline in timelines.values():  # runs only reachable through a cycle
        if timeline.run.run_id not in seen:
            visit(timeline, 0, seen)
    total = Usage()
    for timeline in ordered:
        total.add(timeline.usage)
    starts = [t.started_at for t in ordered]
    ends = [t.ended_at or t.started_at for t in ordered]
    return ConversationTimeline(
        runs=ordered,
        started_at=min(starts) if starts else None,
        ended_at=max(ends) if ends else None,
        usage=total,
        step_count=sum(len(t.steps) for t in ordered),
        axis_end=max(t.axis_end for t in ordered) if ordered else None,
    )
