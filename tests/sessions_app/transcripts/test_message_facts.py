"""A transcript row keeps its message's facts (kind, time, model, usage, parts' kinds and tool ids), never its
content: what a timeline reads instead of parsing every message body."""

import json

from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.transcripts.message_facts import facts_from_json, message_facts
from tests.agents import weather_messages


def test_facts_are_the_message_json_without_content():
    for message in weather_messages("What is the weather in Zürich?"):
        data = json.loads(ModelMessagesTypeAdapter.dump_json([message]))[0]
        facts = message_facts(message)
        assert facts == facts_from_json(data)
        assert facts["kind"] == data["kind"]
        assert [p["part_kind"] for p in facts["parts"]] == [p["part_kind"] for p in data["parts"]]
        assert "Zürich" not in json.dumps(facts, ensure_ascii=False)


def test_a_response_keeps_its_model_usage_and_tool_calls():
    response = weather_messages()[1]
    facts = message_facts(response)
    assert facts["model_name"] == response.model_name
    assert facts["usage"]["input_tokens"] == response.usage.input_tokens
    assert facts["parts"] == [{"part_kind": "tool-call", "tool_call_id": "call-weather-1", "tool_name": "get_weather"}]


def test_malformed_json_gives_what_it_can():
    assert facts_from_json({"kind": "request", "parts": "nope"}) == {"kind": "request", "parts": []}
