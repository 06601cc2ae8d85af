"""One message of each pydantic-ai part kind renders: text, placeholders with media type and size, tools."""

import json
import re

import pytest
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    VideoUrl,
)

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots

pytestmark = pytest.mark.django_db

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 2040


def every_kind() -> list:
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("You are a test agent."),
                UserPromptPart(
                    [
                        "plain words",
                        TextContent("Summary of previous conversation: the flag is on"),
                        BinaryContent(PNG, media_type="image/png"),
                        BinaryContent(b"ID3" + b"\x00" * 997, media_type="audio/mpeg"),
                        BinaryContent(b"%PDF-1.7" + b"\x00" * 100, media_type="application/pdf"),
                        ImageUrl("https://example.com/cat.jpg"),
                        AudioUrl("https://example.com/talk.mp3"),
                        DocumentUrl("https://example.com/spec.pdf"),
                        VideoUrl("https://example.com/demo.mp4"),
                    ]
                ),
            ]
        ),
        ModelResponse(
            parts=[
                ThinkingPart("weighing the options"),
                TextPart("Here is a chart."),
                FilePart(BinaryContent(PNG, media_type="image/png")),
                NativeToolCallPart("web_search", {"query": "quokka"}, "b1"),
                NativeToolReturnPart("web_search", "3 results", "b1"),
                ToolCallPart("lookup", {"id": 1}, "c1"),
            ]
        ),
        ModelRequest(parts=[RetryPromptPart("id must be a string", tool_name="lookup", tool_call_id="c1")]),
        ModelResponse(parts=[ToolCallPart("lookup", {"id": "1"}, "c2")]),
        ModelRequest(parts=[ToolReturnPart("lookup", "found", "c2")]),
        ModelResponse(parts=[TextPart("Done.")]),
    ]


def test_one_message_of_every_kind_renders(world, as_role):
    payload = {
        "conversation_id": "conv-kinds",
        "run_id": "kinds-run",
        "agent": "kinds",
        "state": "complete",
        "messages": json.loads(ModelMessagesTypeAdapter.dump_json(every_kind())),
    }
    ingest_snapshots(world.acme, [parse_snapshot(payload)], source="server", via="api")
    page = as_role("support").get("/c/conv-kinds/").content.decode()
    assert "plain words" in page
    assert "Summary of previous conversation: the flag is on" in page
    assert "(image, audio or document not shown)" not in page
    assert "image not shown (image/png, 2.0 KB)" in page
    assert "audio not shown (audio/mpeg, 1000 B)" in page
    assert "document not shown (application/pdf, 108 B)" in page
    for shown in (
        "image at https://example.com/cat.jpg (image/jpeg)",
        "audio at https://example.com/talk.mp3",
        "document at https://example.com/spec.pdf (application/pdf)",
        "video at https://example.com/demo.mp4",
    ):
        assert shown in page
    assert "File: image not shown (image/png, 2.0 KB)" in page
    assert "weighing the options" in page and "Reasoning" in page
    assert "web_search (built-in)" in page and "3 results" in page
    assert "id must be a string" in page
    assert re.search(r"Tool call <code>lookup</code>", page)


def test_a_textcontent_summary_counts_as_text_for_search_and_diffs():
    from model_messages.rendering import message_text

    message = ModelRequest(parts=[UserPromptPart([TextContent("the summary")])])
    assert message_text(message) == "the summary"
