"""Transcript markup (pure): every piece of message text escaped, marks and links where the layout says."""

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

from sessions_app.dashboard.transcript_html import RenderOptions, render_messages
from sessions_app.transcripts.transcript_layout import EntryInput, lay_out

HOSTILE = '<script>alert(1)</script><img src=x onerror="steal()">'


def _render(*messages, **options) -> str:
    views = lay_out([EntryInput(position=i, role="user", message=m) for i, m in enumerate(messages)])
    return str(render_messages(views, RenderOptions(conversation_pk=7, **options)))


def test_text_tool_names_arguments_and_results_are_escaped():
    html = _render(
        ModelRequest(parts=[UserPromptPart(HOSTILE)]),
        ModelResponse(parts=[ToolCallPart(HOSTILE, {"q": HOSTILE}, tool_call_id="c")]),
        ModelRequest(parts=[ToolReturnPart(HOSTILE, HOSTILE, tool_call_id="c")]),
        ModelResponse(parts=[TextPart("a & b")]),
    )
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a &amp; b" in html


def test_each_message_gets_its_anchor_and_the_hit_is_highlighted():
    html = _render(ModelRequest(parts=[UserPromptPart("one")]), ModelResponse(parts=[TextPart("two")]), highlighted=1)
    assert 'id="m-0"' in html and 'href="#m-0"' in html
    assert '<article class="msg user hit" id="m-1"' in html


def test_a_dangling_call_explains_the_repair_without_ordering_a_retry():
    html = _render(ModelResponse(parts=[ToolCallPart("deploy", {}, tool_call_id="c")]))
    assert "No result recorded" in html
    assert "check the destination before retrying" in html
    assert '<span class="badge bad">repair</span>' in html


def test_the_reveal_form_appears_only_with_a_token_and_only_on_masked_messages():
    views = lay_out(
        [
            EntryInput(0, "user", ModelRequest(parts=[UserPromptPart("token=abc")])),
            EntryInput(1, "user", ModelRequest(parts=[UserPromptPart("nothing secret")])),
        ],
        mask=lambda text: text.replace("abc", "***"),
    )
    options = RenderOptions(conversation_pk=7, reveal_csrf_token="tok", reveal_url="/c/7/reveal/{position}")
    html = str(render_messages(views, options))
    assert html.count("Reveal masked text") == 1
    assert 'action="/c/7/reveal/0"' in html
    without_token = str(render_messages(views, RenderOptions(conversation_pk=7)))
    assert "Reveal masked text" not in without_token


def test_a_call_only_a_snapshot_holds_is_marked_after_the_message_it_follows_and_escaped():
    from sessions_app.dashboard.transcript_html import UnrecordedMark

    mark = UnrecordedMark(
        anchor="interrupted-0123456789abcdef",
        run_id="run-3",
        tool_name=HOSTILE,
        detail=HOSTILE,
        snapshot_url="/r/run-3/snapshots/1/diff",
    )
    html = _render(
        ModelRequest(parts=[UserPromptPart("one")]),
        ModelResponse(parts=[TextPart("two")]),
        unrecorded={0: [mark]},
    )
    assert html.index('id="m-0"') < html.index('id="interrupted-0123456789abcdef"') < html.index('id="m-1"')
    assert "<script>" not in html and "<img" not in html
    assert 'repair: synthesized "interrupted" return' in html
    assert '<a href="/r/run-3/snapshots/1/diff">the interrupted snapshot</a>' in html
    assert "the run&#x27;s audit" not in html and "the run's audit" not in html  # no audit link was given


def test_a_value_masked_by_a_tenant_pattern_is_not_called_a_credential():
    """B10: a number hidden by the tenant pattern \\b5428\\b offered 'Reveal credentials'."""
    views = lay_out(
        [EntryInput(0, "user", ModelRequest(parts=[UserPromptPart("card ending 5428")]))],
        mask=lambda text: text.replace("5428", "****"),
    )
    options = RenderOptions(conversation_pk=7, reveal_csrf_token="tok", reveal_url="/c/7/reveal/{position}")
    html = str(render_messages(views, options))
    assert "Reveal masked text" in html
    assert "credential" not in html.lower()
