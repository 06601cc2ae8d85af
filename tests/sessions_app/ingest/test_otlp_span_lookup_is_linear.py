"""Matching an export's spans to their agent-run spans is linear (from issue 29: 8,000 runs and 8,000 model
spans took 10.8 s, every span scanning the runs for its run id). Counted, not timed: the attribute reads
`decode_export` makes grow with the spans, the same per span at 200 runs as at 800."""

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sessions_app.ingest import otlp
from sessions_app.ingest.otlp_wire import SpanFacts

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class CountedAttributes(dict):
    reads = 0

    def get(self, key, default=None):
        CountedAttributes.reads += 1
        return super().get(key, default)


def _spans(runs: int) -> Iterator[SpanFacts]:
    """`runs` agent-run spans (without messages, so refused cheaply) and one model span per run outside it (its
    parent not exported), naming its run only by `gen_ai.agent.call.id`: the lookup that scanned every run."""
    for i in range(runs):
        call = CountedAttributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.call.id": f"call-{i}"})
        yield SpanFacts("t" * 32, f"run-{i}", "", "agent run", "pydantic-ai", T0, T0, False, call)
    for i in range(runs):
        chat = CountedAttributes({"gen_ai.operation.name": "chat", "gen_ai.agent.call.id": f"call-{i}"})
        yield SpanFacts("t" * 32, f"chat-{i}", "elsewhere", "chat", "pydantic-ai", T0, T0, False, chat)


def _reads(runs: int, monkeypatch: pytest.MonkeyPatch) -> int:
    spans = list(_spans(runs))
    monkeypatch.setattr(otlp, "spans_of", lambda _: spans)
    CountedAttributes.reads = 0
    decoded = otlp.decode_export(ExportTraceServiceRequest())
    assert decoded.rejected_spans == 2 * runs  # every run refused (no messages) with its model span, none orphaned
    assert not [reason for reason in decoded.rejected if "without their agent-run span" in reason]
    return CountedAttributes.reads


def test_span_to_run_matching_reads_each_span_a_bounded_number_of_times(monkeypatch):
    small, large = _reads(200, monkeypatch), _reads(800, monkeypatch)
    assert large <= 4 * small * 1.05  # four times the spans, four times the reads (quadratic was sixteen)
    assert large / (2 * 800) < 10  # a few reads per span
