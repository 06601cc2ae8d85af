"""How a recovered transcript is laid out for reading: pure, over pydantic-ai messages, no ORM.

Each tool call is shown beside its result (paired by tool_call_id, first unanswered call wins), and what
pydantic-ai's history repair would change is marked where it happens:
- a result whose call is not in the history is an orphan, which `repair_messages` drops before the next request;
- a call with no result is dangling, for which `repair_messages` synthesizes an "interrupted" return;
- a return already synthesized by pydantic-ai (metadata `pydantic_ai_synthesized_tool_return`) is shown as such.
The audit gates decide verdicts; this module only says what a reader sees.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic_ai.messages import (
    BaseToolCallPart,
    BaseToolReturnPart,
    BinaryContent,
    CompactionPart,
    FilePart,
    FileUrl,
    ModelMessage,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from masking.detectors import redact_adjacent

SYNTHESIZED_KEY = "pydantic_ai_synthesized_tool_return"

Mask = Callable[[str], str]

ROLE_LABELS = {
    "user": "User",
    "assistant": "Assistant",
    "tool_call": "Tool call",
    "tool_result": "Tool result",
    "system": "System",
}


def _no_mask(text: str) -> str:
    return text


@dataclass
class ToolResultView:
    position: int
    tool_name: str
    text: str
    synthesized: bool = False
    is_retry: bool = False


@dataclass
class PartView:
    """One part of a message. `kind`: text, tool_call, tool_result, reasoning, media."""

    kind: str
    role: str
    text: str = ""
    tool_name: str = ""
    tool_call_id: str = ""
    result: ToolResultView | None = None
    paired_with: int | None = None  # for a result shown beside its call: the call's position
    orphan: bool = False  # a result with no call: repair drops it
    dangling: bool = False  # a call with no result: repair synthesizes an interrupted return
    synthesized: bool = False


@dataclass
class MessageView:
    position: int
    role: str
    run_id: str
    timestamp: datetime | None
    recovered_from_compaction: bool
    summary_artifact: bool
    parts: list[PartView] = field(default_factory=list)
    masked: bool = False  # some text was hidden by the credential mask

    @property
    def role_label(self) -> str:
        return ROLE_LABELS.get(self.role, self.role)

    @property
    def repairs(self) -> list[PartView]:
        out = [p for p in self.parts if p.orphan or p.dangling or p.synthesized]
        out += [p for p in self.parts if p.result is not None and p.result.synthesized]
        return out

    @property
    def only_paired_results(self) -> bool:
        """True when every part is a result already shown beside its call (the message can be shown folded)."""
        return bool(self.parts) and all(p.kind == "tool_result" and p.paired_with is not None for p in self.parts)


@dataclass(frozen=True)
class EntryInput:
    position: int
    role: str
    message: ModelMessage
    run_id: str = ""
    timestamp: datetime | None = None
    recovered_from_compaction: bool = False
    summary_artifact: bool = False


# What a message's view repeats from its entry as it is.
_ENTRY_FACTS = ("position", "role", "run_id", "timestamp", "recovered_from_compaction", "summary_artifact")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


def _kind_of(media_type: str) -> str:
    head = media_type.split("/", 1)[0]
    return {"image": "image", "audio": "audio", "video": "video"}.get(head, "document")


def media_label(item: object) -> str:
    """Pure: a labelled placeholder for content the transcript does not show inline (kind, media type, size)."""
    if isinstance(item, BinaryContent):
        return f"{_kind_of(item.media_type)} not shown ({item.media_type}, {_size(len(item.data))})"
    if isinstance(item, FileUrl):
        try:
            media_type = item.media_type
        except ValueError:  # an address without a known extension
            media_type = "unknown type"
        return f"{_kind_of(media_type)} at {item.url} ({media_type})"
    return f"{type(item).__name__} not shown"


def _user_items(part: UserPromptPart) -> list[tuple[str, str]]:
    """(kind, text) for each item of a prompt: text for strings and TextContent, media placeholders otherwise."""
    if isinstance(part.content, str):
        return [("text", part.content)]
    items: list[tuple[str, str]] = []
    for item in part.content:
        if isinstance(item, str):
            items.append(("text", item))
        elif isinstance(item, TextContent):
            items.append(("text", item.content))
        else:
            items.append(("media", media_label(item)))
    return items


def _tool_view(
    kind: str, part: BaseToolCallPart | BaseToolReturnPart | RetryPromptPart, text: str, synthesized: bool = False
) -> PartView:
    """A tool call or tool result (`kind` is also its role); a provider's built-in tool is named as such."""
    name = part.tool_name or ""
    if not isinstance(part, ToolCallPart | ToolReturnPart | RetryPromptPart):
        name += " (built-in)"
    return PartView(kind, kind, text, tool_name=name, tool_call_id=part.tool_call_id, synthesized=synthesized)


def _part_views(entry: EntryInput, mask: Mask) -> list[PartView]:
    views: list[PartView] = []
    for part in entry.message.parts:
        if isinstance(part, ThinkingPart):
            if part.content:
                views.append(PartView("reasoning", "assistant", mask(part.content)))
        elif isinstance(part, BaseToolCallPart):
            views.append(_tool_view("tool_call", part, mask(part.args_as_json_str())))
        elif isinstance(part, BaseToolReturnPart):
            synthesized = bool((part.metadata or {}).get(SYNTHESIZED_KEY)) if isinstance(part.metadata, dict) else False
            views.append(_tool_view("tool_result", part, mask(part.model_response_str()), synthesized))
        elif isinstance(part, RetryPromptPart):
            if part.tool_name:
                views.append(_tool_view("tool_result", part, mask(part.model_response())))
            else:
                views.append(PartView("text", "user", mask(part.model_response())))
        elif isinstance(part, UserPromptPart):
            for kind, text in _user_items(part):
                if text:
                    views.append(PartView(kind, "user", mask(text) if kind == "text" else text))
        elif isinstance(part, FilePart):
            views.append(PartView("media", "assistant", "File: " + media_label(part.content)))
        elif isinstance(part, SystemPromptPart):
            views.append(PartView("text", "system", mask(part.content)))
        elif isinstance(part, TextPart):
            if part.content:
                views.append(PartView("text", "assistant", mask(part.content)))
        elif isinstance(part, CompactionPart):
            if part.content:
                views.append(PartView("text", "system", mask(part.content)))
        else:
            views.append(PartView("media", entry.role, f"({type(part).__name__} not shown)"))
    return views


def lay_out(
    entries: Sequence[EntryInput],
    *,
    mask: Mask = _no_mask,
    unmasked_positions: frozenset[int] = frozenset(),
) -> list[MessageView]:
    """The transcript as a reader sees it, in order.

    `mask` hides credentials everywhere except in the messages at `unmasked_positions`; revealing a tool
    call's message also reveals the result shown beside it.
    """
    views: list[MessageView] = []
    open_calls: dict[str, tuple[int, PartView]] = {}
    for entry in entries:
        view = MessageView(**{name: getattr(entry, name) for name in _ENTRY_FACTS}, parts=_part_views(entry, _no_mask))
        if not entry.summary_artifact:
            for part in view.parts:
                if part.kind == "tool_call":
                    open_calls[part.tool_call_id] = (entry.position, part)
                elif part.kind == "tool_result":
                    opened = open_calls.pop(part.tool_call_id, None)
                    if opened is None:
                        part.orphan = True
                        continue
                    call_position, call = opened
                    call.result = ToolResultView(
                        position=entry.position,
                        tool_name=part.tool_name,
                        text=part.text,
                        synthesized=part.synthesized,
                    )
                    part.paired_with = call_position
        views.append(view)
    for _, call in open_calls.values():
        call.dangling = True
    by_position = {view.position: view for view in views if not view.summary_artifact}
    for view in views:
        if view.position in unmasked_positions and not view.summary_artifact:
            continue
        # Masked as a sequence: a value can sit in the part after its label (`['password:', value]`).
        for part, masked in zip(view.parts, redact_adjacent([part.text for part in view.parts], mask), strict=True):
            if part.paired_with is not None and part.paired_with in unmasked_positions:
                continue
            if masked != part.text:
                part.text = masked
                view.masked = True
                if part.paired_with is not None and part.paired_with in by_position:
                    call_view = by_position[part.paired_with]
                    call_view.masked = True
                    for call in call_view.parts:
                        if call.result is not None and call.tool_call_id == part.tool_call_id:
                            call.result.text = masked
    return views
