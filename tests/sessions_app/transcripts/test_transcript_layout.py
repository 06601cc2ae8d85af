"""The reading layout of a transcript (pure): calls beside results, repairs marked where they happen, masking."""

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

from sessions_app.transcripts.transcript_layout import EntryInput, lay_out


def _entries(*messages) -> list[EntryInput]:
    return [EntryInput(position=i, role="x", message=m) for i, m in enumerate(messages)]


def _mask(text: str) -> str:
    return text.replace("hunter2", "***")


def test_a_call_carries_its_result_and_the_result_message_points_back():
    views = lay_out(
        _entries(
            ModelRequest(parts=[UserPromptPart("weather?")]),
            ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Oslo"}, tool_call_id="c1")]),
            ModelRequest(parts=[ToolReturnPart("get_weather", "rain", tool_call_id="c1")]),
        )
    )
    call = views[1].parts[0]
    assert call.result is not None and call.result.text == "rain" and call.result.position == 2
    assert views[2].parts[0].paired_with == 1
    assert views[2].only_paired_results
    assert not any(v.repairs for v in views)


def test_a_result_without_its_call_is_an_orphan_repair():
    views = lay_out(_entries(ModelRequest(parts=[ToolReturnPart("lookup", "stale", tool_call_id="gone")])))
    part = views[0].parts[0]
    assert part.orphan and part.paired_with is None
    assert views[0].repairs == [part]


def test_a_call_without_a_result_is_dangling():
    views = lay_out(_entries(ModelResponse(parts=[ToolCallPart("deploy", {}, tool_call_id="c9")])))
    assert views[0].parts[0].dangling
    assert views[0].repairs


def test_a_synthesized_interrupted_return_is_marked_on_the_call():
    synthesized = ToolReturnPart(
        "deploy",
        "The tool call was interrupted before a result was produced.",
        tool_call_id="c2",
        metadata={"pydantic_ai_synthesized_tool_return": True},
    )
    views = lay_out(
        _entries(
            ModelResponse(parts=[ToolCallPart("deploy", {}, tool_call_id="c2")]),
            ModelRequest(parts=[synthesized]),
        )
    )
    assert views[0].parts[0].result.synthesized
    assert views[0].repairs and views[1].repairs


def test_a_repeated_call_id_pairs_with_the_first_unanswered_call():
    views = lay_out(
        _entries(
            ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="same")]),
            ModelRequest(parts=[ToolReturnPart("t", "one", tool_call_id="same")]),
            ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="same")]),
            ModelRequest(parts=[ToolReturnPart("t", "two", tool_call_id="same")]),
        )
    )
    assert [views[0].parts[0].result.text, views[2].parts[0].result.text] == ["one", "two"]


def test_masking_hides_credentials_in_calls_results_and_text_and_flags_the_message():
    views = lay_out(
        _entries(
            ModelRequest(parts=[UserPromptPart("my password is hunter2")]),
            ModelResponse(parts=[ToolCallPart("login", {"pw": "hunter2"}, tool_call_id="c")]),
            ModelRequest(parts=[ToolReturnPart("login", "ok hunter2", tool_call_id="c")]),
            ModelResponse(parts=[TextPart("done")]),
        ),
        mask=_mask,
    )
    texts = [p.text for v in views for p in v.parts] + [views[1].parts[0].result.text]
    assert not any("hunter2" in t for t in texts)
    assert [v.masked for v in views] == [True, True, True, False]


def test_revealing_a_call_reveals_the_result_shown_beside_it_and_nothing_else():
    views = lay_out(
        _entries(
            ModelRequest(parts=[UserPromptPart("hunter2")]),
            ModelResponse(parts=[ToolCallPart("login", {}, tool_call_id="c")]),
            ModelRequest(parts=[ToolReturnPart("login", "token hunter2", tool_call_id="c")]),
        ),
        mask=_mask,
        unmasked_positions=frozenset({1}),
    )
    assert views[1].parts[0].result.text == "token hunter2"
    assert views[0].parts[0].text == "***"


def test_summary_artifacts_take_no_part_in_pairing():
    entries = [
        EntryInput(
            0, "system", ModelRequest(parts=[ToolReturnPart("t", "x", tool_call_id="c")]), summary_artifact=True
        ),
        EntryInput(0, "tool_call", ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="c")])),
    ]
    views = lay_out(entries)
    assert not views[0].parts[0].orphan
    assert views[1].parts[0].dangling
