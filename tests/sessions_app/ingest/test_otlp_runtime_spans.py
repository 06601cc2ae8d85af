"""Pure: a runtime span keeps only its named attributes (never arguments, never a NaN), and a run span's
`final_result` gives its pending calls only when it is a DeferredToolRequests."""

import json
from datetime import UTC, datetime

import pytest

from sessions_app.ingest.otlp import pending_approvals, runtime_span
from sessions_app.ingest.otlp_wire import SpanFacts

AT = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def _span(name: str, **attributes) -> SpanFacts:
    return SpanFacts("t" * 32, "s" * 16, "", name, "pydantic-ai", AT, AT, False, attributes)


def test_only_named_scalar_attributes_are_kept():
    span = _span(
        "review tool approval",
        **{
            "approval_reviewer.tool": "wipe",
            "approval_reviewer.tool_call_id": "call-1",
            "approval_reviewer.arguments": '{"password": "hunter2"}',
            "approval_reviewer.decision": "ask",
            "approval_reviewer.confidence": float("nan"),
            "approval_reviewer.model_result": "x" * 500,
        },
    )
    kept = runtime_span("run-1", span)
    assert kept.kind == "approval_review" and kept.span_key == f"otlp:{'t' * 32}:{'s' * 16}"
    assert kept.facts == {"tool": "wipe", "tool_call_id": "call-1", "decision": "ask", "model_result": "x" * 200}


@pytest.mark.parametrize(
    "final_result",
    [None, "done", "{not json", json.dumps({"approvals": "no"}), json.dumps(["approvals"]), json.dumps({"calls": []})],
)
def test_a_final_result_that_is_not_deferred_tool_requests_pends_nothing(final_result):
    attributes = {"final_result": final_result} if final_result is not None else {}
    assert pending_approvals("run-1", _span("invoke_agent agent", **attributes)) == []


def test_each_approval_and_external_call_pends_without_its_arguments():
    output = {
        "approvals": [{"tool_name": "wipe", "tool_call_id": "call-1", "args": {"table": "secret"}}, {"x": 1}],
        "calls": [{"tool_name": "fetch", "tool_call_id": "call-2"}],
    }
    pending = pending_approvals("run-1", _span("invoke_agent agent", final_result=json.dumps(output)))
    assert [(p.kind, p.facts) for p in pending] == [
        ("approval_pending", {"tool": "wipe", "tool_call_id": "call-1", "wait": "approval"}),
        ("approval_pending", {"tool": "fetch", "tool_call_id": "call-2", "wait": "external"}),
    ]
    assert len({p.span_key for p in pending}) == 2 and all(p.started_at == AT for p in pending)
