"""What the six gates read from a history's messages, as one value that extends with new messages. Pure.

A run's next snapshot repeats the history audited a moment ago and adds a few messages: `summarize` extends the
summary of that prefix by the new messages alone, and `summary_findings` gives exactly what the gates give on the
whole history (tests/sessions_app/audit/test_audit_summary.py compares the two after every snapshot of every
scenario and of generated stress conversations).

- Round trip: a stored message's answer depends on its bytes alone, so the prefix's problems are kept and only
  the new stored messages are examined.
- Prompt continuity, conversation scope, outcome receipt: counts, sets and flags, extended.
- Tool pairing: pydantic-ai's repair pairs results with the calls before them. At a place in the history where
  no call is open (in the repair's own walk) and after which every result naming a call made before it follows
  a call of its id, the repair of the whole is the repair of the two sides joined: nothing is dropped or
  synthesized differently (the order it closes out calls in is kept, `_events`). The summary keeps what the
  repair did up to the last such place and the messages after it (`tail`, usually the last request and
  response); a new snapshot runs the repair over the tail and its new messages only, and over the whole history
  when a new result names a call made before that place without one.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from sessions_app.audit.gates.authority import check_authority
from sessions_app.audit.gates.context import AuditContext, Finding
from sessions_app.audit.gates.conversation_scope import scope_findings, scope_ids
from sessions_app.audit.gates.outcome_receipt import outcome_findings
from sessions_app.audit.gates.prompt_continuity import PromptFacts, prompt_facts, prompt_findings
from sessions_app.audit.gates.round_trip import round_trip_findings, round_trip_problems
from sessions_app.audit.gates.tool_pairing import (
    PairingEvent,
    _is_tool_result,
    answered_calls,
    pairing_events,
    pairing_findings,
)

CUTS_TRIED = 4  # places tried, latest first, before the tail is kept whole


@dataclass(frozen=True)
class Pairing:
    """What pydantic-ai's repair did to the history: `settled_*` up to the last place the history pairs apart
    at, the calls made before it (`settled_calls`), the messages after it (`tail`), and all of it."""

    settled_calls: Mapping[str, int] = field(default_factory=dict)  # call id: the order it first appeared in
    settled_orphans: tuple[PairingEvent, ...] = ()
    settled_closed: tuple[PairingEvent, ...] = ()
    tail: tuple[ModelMessage, ...] = ()
    orphans: tuple[PairingEvent, ...] = ()
    closed: tuple[PairingEvent, ...] = ()


@dataclass(frozen=True)
class HistorySummary:
    """A history's summary: its stored messages (to recognise a history extending it), how many messages they
    load as, and what each gate reads. `reusable`: every stored message survived the round trip and they load as
    exactly these messages, so a history with the same stored prefix has the same messages there."""

    stored: tuple[str, ...] = ()
    messages: int = 0
    reusable: bool = True
    problems: tuple[tuple[int, str, str], ...] = ()
    prompt: PromptFacts = PromptFacts()
    conversation_ids: Mapping[str, int] = field(default_factory=dict)
    run_ids: frozenset[str] = frozenset()
    responded: bool = False
    answered: frozenset[str] = frozenset()
    pairing: Pairing = Pairing()


EMPTY = HistorySummary()


def extends(before: HistorySummary, stored: Sequence[str], messages: Sequence[ModelMessage]) -> bool:
    """Whether `before` summarizes a prefix of this history, so `summarize` may go on from it."""
    count = len(before.stored)
    return (
        before.reusable
        and count <= len(stored)
        and before.messages <= len(messages)
        and tuple(stored[:count]) == before.stored
    )


def summarize(
    stored: Sequence[str], messages: Sequence[ModelMessage], before: HistorySummary | None = None
) -> HistorySummary:
    """The summary of the history stored as `stored` and loaded as `messages`, from `before` (a summary of a
    prefix of it, see `extends`) and the rest; from scratch when `before` is None or summarizes no prefix."""
    if before is None or not extends(before, stored, messages):
        before = EMPTY
    stored = tuple(stored)
    new_stored = stored[len(before.stored) :]
    new = messages[before.messages :]
    problems, count = round_trip_problems(new_stored, new, start=len(before.stored))
    ids, run_ids = scope_ids(new)
    conversation_ids = dict(before.conversation_ids)
    for conversation_id, seen in ids.items():
        conversation_ids[conversation_id] = conversation_ids.get(conversation_id, 0) + seen
    return HistorySummary(
        stored=stored,
        messages=len(messages),
        reusable=before.reusable and not problems and count == len(new),
        problems=(*before.problems, *problems),
        prompt=prompt_facts(new, before.prompt),
        conversation_ids=conversation_ids,
        run_ids=before.run_ids | run_ids if run_ids - before.run_ids else before.run_ids,
        responded=before.responded or any(isinstance(m, ModelResponse) for m in new),
        answered=before.answered | answered_calls(new),
        pairing=_extend_pairing(before.pairing, new, messages),
    )


def summary_findings(summary: HistorySummary, ctx: AuditContext) -> list[Finding]:
    """What the six gates find on the summarized history, in the order `run_gates` runs them."""
    return [
        *round_trip_findings(summary.problems),
        *check_authority((), ctx),
        *prompt_findings(summary.prompt, ctx),
        *pairing_findings(summary.pairing.orphans, summary.pairing.closed, summary.answered, ctx),
        *scope_findings(summary.conversation_ids, summary.run_ids, ctx),
        *outcome_findings(summary.responded, ctx),
    ]


def _calls(messages: Sequence[ModelMessage]) -> list[str]:
    """The ids of the calls in `messages`, each once, in the order they first appear."""
    return list(
        dict.fromkeys(
            part.tool_call_id
            for message in messages
            if isinstance(message, ModelResponse)
            for part in message.parts
            if isinstance(part, ToolCallPart)
        )
    )


def _with_calls(known: Mapping[str, int], messages: Sequence[ModelMessage]) -> Mapping[str, int]:
    """`known` (call id: the order it first appeared in) with the calls of `messages` that are new."""
    new = [call for call in _calls(messages) if call not in known]
    if not new:
        return known
    order = dict(known)
    for call in new:
        order[call] = len(order)
    return order


def _pairs_apart(known: Mapping[str, int], before: set[str], window: Sequence[ModelMessage]) -> bool:
    """Whether the repair pairs `window` alike with or without the calls made before it (`known`, `before`): every
    result in it naming such a call follows a call of that id within it (else the repair keeps it as answering an
    earlier call, where the window alone would drop it as an orphan)."""
    called: set[str] = set()
    for message in window:
        if isinstance(message, ModelResponse):
            called.update(part.tool_call_id for part in message.parts if isinstance(part, ToolCallPart))
        else:
            for part in message.parts:
                if (
                    _is_tool_result(part)
                    and part.tool_call_id not in called
                    and (part.tool_call_id in known or part.tool_call_id in before)
                ):
                    return False
    return True


def _closed_places(messages: Sequence[ModelMessage]) -> list[int]:
    """The places (message counts) after which no call is open, in pydantic-ai's own pairing walk
    (`pydantic_ai.messages._dangling_tool_calls_by_response`): a result answers the oldest open call of its id;
    a call reusing the id of a call of an earlier response leaves that one dangling, no longer open."""
    open_calls: dict[str, list[int]] = {}
    still_open = 0
    places = []
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    pending = open_calls.setdefault(part.tool_call_id, [])
                    if pending and pending[-1] != index:
                        still_open -= len(pending)
                        pending.clear()
                    pending.append(index)
                    still_open += 1
        elif isinstance(message, ModelRequest):
            for result in message.parts:
                if _is_tool_result(result) and (answered := open_calls.get(result.tool_call_id)):
                    answered.pop(0)
                    still_open -= 1
        if still_open == 0:
            places.append(index + 1)
    return places


def _cut(window: Sequence[ModelMessage], known: Mapping[str, int]) -> int:
    """The latest place the window pairs apart at: no call open there, and the rest pairs alike without what
    came before it. 0 when none of the latest few places does."""
    for place in reversed(_closed_places(window)[-CUTS_TRIED:]):
        if place == len(window) or _pairs_apart(known, set(_calls(window[:place])), window[place:]):
            return place
    return 0


def _events(
    segment: Sequence[ModelMessage], known: Mapping[str, int]
) -> tuple[tuple[PairingEvent, ...], tuple[PairingEvent, ...]]:
    """What the repair does to `segment` as part of the whole history, the history before it pairing apart.

    One thing of what came before still shows: the repair closes out the calls a response leaves open in the
    order their ids first appeared in the whole history. The calls of `segment` whose ids were used before go
    first, made and answered at once, in that order."""
    if not segment:
        return (), ()
    reused = sorted((call for call in _calls(segment) if call in known), key=known.__getitem__)
    if reused:
        opening: tuple[ModelMessage, ...] = (
            ModelResponse(parts=[ToolCallPart("", None, tool_call_id=call) for call in reused]),
            ModelRequest(parts=[ToolReturnPart("", None, tool_call_id=call) for call in reused]),
        )
        segment = (*opening, *segment)
    return pairing_events(segment)


def _extend_pairing(before: Pairing, new: Sequence[ModelMessage], messages: Sequence[ModelMessage]) -> Pairing:
    window = (*before.tail, *new)
    if not _pairs_apart(before.settled_calls, set(), window):
        # A new result answers a call made before the kept place: the repair runs over the whole history again.
        before, window = Pairing(), tuple(messages)
    cut = _cut(window, before.settled_calls)
    settled, tail = window[:cut], window[cut:]
    settled_calls = _with_calls(before.settled_calls, settled)
    orphans, closed = _events(settled, before.settled_calls)
    tail_orphans, tail_closed = _events(tail, settled_calls)
    settled_orphans = (*before.settled_orphans, *orphans)
    settled_closed = (*before.settled_closed, *closed)
    return Pairing(
        settled_calls=settled_calls,
        settled_orphans=settled_orphans,
        settled_closed=settled_closed,
        tail=tail,
        orphans=(*settled_orphans, *tail_orphans),
        closed=(*settled_closed, *tail_closed),
    )
