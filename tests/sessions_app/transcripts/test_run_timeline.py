"""The run timeline: tree by parent_run_id, steps with model, tokens and duration, tool calls under their step."""

import json
from datetime import UTC, datetime, timedelta

from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from sessions_app.dashboard.timeline_html import span_label
from sessions_app.transcripts.run_timeline import EffectFacts, RunFacts, build_timeline

T0 = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)


def _json(message) -> dict:
    return json.loads(ModelMessagesTypeAdapter.dump_json([message]))[0]


def _run(pk: int, run_id: str, parent: str = "", started: datetime = T0) -> RunFacts:
    return RunFacts(pk, run_id, parent, "agent", "complete", started)


def _turn(at: datetime, call: str | None = None) -> list:
    request = ModelRequest(parts=[UserPromptPart("go", timestamp=at)])
    parts = [ToolCallPart("deploy", {"x": 1}, call)] if call else [TextPart("done")]
    usage = RequestUsage(input_tokens=100, output_tokens=20, cache_read_tokens=40)
    response = ModelResponse(parts=parts, usage=usage, model_name="gpt-5", timestamp=at + timedelta(seconds=2))
    return [request, response]


def test_steps_carry_model_tokens_and_duration_and_runs_total_them():
    messages = _turn(T0) + _turn(T0 + timedelta(minutes=1))
    rows = [(i, "r1", _json(m)) for i, m in enumerate(messages)]
    timeline = build_timeline([_run(1, "r1")], rows, {})
    (run,) = timeline.runs
    assert [s.model_name for s in run.steps] == ["gpt-5", "gpt-5"]
    assert [s.seconds for s in run.steps] == [2.0, 2.0]
    assert (run.usage.input, run.usage.output, run.usage.cache_read) == (200, 40, 80)
    assert timeline.usage.input == 200 and timeline.step_count == 2


def test_runs_nest_by_parent_and_start_at_their_first_message():
    rows = []
    for n, (run_id, minutes) in enumerate((("r1", 0), ("r2", 15), ("r3", 30), ("r4", 45))):
        for i, m in enumerate(_turn(T0 + timedelta(minutes=minutes))):
            rows.append((n * 2 + i, run_id, _json(m)))
    # All stored with the same started_at (as threaded runs were): their messages decide.
    runs = [_run(1, "r1"), _run(2, "r2", "r1"), _run(3, "r3", "r2"), _run(4, "r4", "r1")]
    timeline = build_timeline(runs, rows, {})
    assert [(t.run.run_id, t.depth) for t in timeline.runs] == [("r1", 0), ("r2", 1), ("r3", 2), ("r4", 1)]
    assert [t.started_at.minute for t in timeline.runs] == [0, 15, 30, 45]


def test_tool_calls_sit_under_their_step_with_the_ledgers_duration_or_no_result():
    call, answer = _turn(T0, call="c1"), _turn(T0 + timedelta(minutes=5), call="c2")
    back = ModelRequest(parts=[ToolReturnPart("deploy", "ok", "c1", timestamp=T0 + timedelta(seconds=9))])
    messages = call + [back] + answer
    rows = [(i, "r1", _json(m)) for i, m in enumerate(messages)]
    ledger = {"c1": EffectFacts("c1", "deploy", "completed", T0 + timedelta(seconds=3), T0 + timedelta(seconds=8))}
    timeline = build_timeline([_run(1, "r1")], rows, ledger)
    first, second = timeline.runs[0].steps
    assert [(t.tool_name, t.status, t.seconds, t.result_position) for t in first.tools] == [
        ("deploy", "completed", 5.0, 2)
    ]
    assert [(t.status, t.seconds) for t in second.tools] == [("no result", None)]


def test_an_end_on_another_day_keeps_its_date():
    label = span_label(T0, T0 + timedelta(days=92, hours=1, minutes=9, seconds=54))
    assert label.endswith('2026-06-01 03:09:54</time>')
    assert span_label(T0, T0 + timedelta(hours=1)).endswith(">03:00:00</time>")
