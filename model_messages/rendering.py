"""Plain text and a role for one pydantic-ai message: what the transcript shows and search indexes.

Pure: works on `ModelMessage` objects only.
"""

from collections.abc import Collection

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

USER, ASSISTANT, TOOL_CALL, TOOL_RESULT, SYSTEM = "user", "assistant", "tool_call", "tool_result", "system"


def _user_prompt_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    # Images, audio and documents are not text; only the text items of a multi-modal prompt count (plain
    # strings and TextContent, which is how a compaction summary may arrive).
    texts = [item.content if isinstance(item, TextContent) else item for item in part.content]
    return "\n".join(text for text in texts if isinstance(text, str))


def user_prompt_text(message: ModelMessage) -> str:
    """The text of a message's user prompts ("" for a response or a request without one)."""
    if not isinstance(message, ModelRequest):
        return ""
    return "\n".join(_user_prompt_text(part) for part in message.parts if isinstance(part, UserPromptPart))


def part_lines(message: ModelMessage, *, skip_tools: Collection[str] = ()) -> list[tuple[str, str]]:
    """`(role, text)` for each text-bearing part; reasoning, media and tools named in `skip_tools` are left out."""
    lines: list[tuple[str, str]] = []
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            continue
        if isinstance(part, ToolCallPart):
            if part.tool_name not in skip_tools:
                lines.append((TOOL_CALL, f"{part.tool_name}({part.args_as_json_str()})"))
        elif isinstance(part, ToolReturnPart):
            if part.tool_name not in skip_tools:
                lines.append((TOOL_RESULT, part.model_response_str()))
        elif isinstance(part, RetryPromptPart):
            if part.tool_name not in skip_tools:
                lines.append((TOOL_RESULT if part.tool_name else USER, part.model_response()))
        elif isinstance(part, UserPromptPart):
            text = _user_prompt_text(part)
            if text:
                lines.append((USER, text))
        elif isinstance(part, SystemPromptPart):
            lines.append((SYSTEM, part.content))
        elif isinstance(part, TextPart):
            if part.content:
                lines.append((ASSISTANT, part.content))
        elif isinstance(part, CompactionPart) and part.content:
            lines.append((SYSTEM, part.content))
    return lines


def message_role(message: ModelMessage) -> str:
    """The one role a message is filed under: what a reader would call it at a glance."""
    roles = {role for role, _ in part_lines(message)}
    if isinstance(message, ModelResponse):
        if ASSISTANT in roles:
            return ASSISTANT
        return TOOL_CALL if TOOL_CALL in roles else ASSISTANT
    assert isinstance(message, ModelRequest)  # noqa: S101 - a message is a request or a response
    for role in (USER, TOOL_RESULT, SYSTEM):
        if role in roles:
            return role
    return USER


def message_text(message: ModelMessage, *, skip_tools: Collection[str] = ()) -> str:
    return "\n".join(text for _, text in part_lines(message, skip_tools=skip_tools))
