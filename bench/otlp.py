"""POST /v1/traces as a threaded conversation grows, on PostgreSQL.

    .venv/bin/python bench/otlp.py [--runs 200] [--every 50] [--database-url postgres://root@127.0.0.1:5432/sd_otlp]

A real agent (FunctionModel: a prompt, a tool call, its result, the answer) runs `--runs` times threaded through
`message_history`, with pydantic-ai's instrumentation into an in-memory exporter; each run's spans are one OTLP
protobuf export, posted in order through the whole HTTP stack (middleware, key check, decoding, the inherited
copies read from the stored transcript, validation, ingest, recovery, index, audit), Django's test client in
process. Reported: the median and p95 of the posts around every `--every`-th run, with the history's length.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ingest import setup  # noqa: E402  (bench/ingest.py: creates the database, migrates)


def record(runs: int) -> tuple[list[bytes], int]:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from tests.agents import weather_agent

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent = weather_agent()
    bodies: list[bytes] = []
    history = None
    for n in range(runs):
        result = agent.run_sync(
            f"Weather, question {n}?", message_history=history, conversation_id="bench-otlp",
            capabilities=[instrumentation],
        )
        history = result.all_messages()
        bodies.append(encode_spans(memory.get_finished_spans()).SerializeToString())
        memory.clear()
    return bodies, len(history or [])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--database-url", default="postgres://root@127.0.0.1:5432/sd_otlp")
    args = parser.parse_args()
    setup(args.database_url)
    from django.test import Client

    from sessions_app.models import Conversation, Tenant
    from sessions_app.tenancy.api_keys import create_api_key

    started = time.perf_counter()
    bodies, history_length = record(args.runs)
    print(f"recorded {args.runs} threaded runs in {time.perf_counter() - started:.1f} s")
    slug = f"bench-otlp-{int(time.time())}"  # a fresh tenant per trial: stored messages are protected from deletes
    tenant = Tenant.objects.create(slug=slug, name="Bench OTLP")
    _, key = create_api_key(tenant, "server")
    client = Client()
    times = []
    for body in bodies:
        began = time.perf_counter()
        response = client.post(
            "/v1/traces", data=body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        times.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, response.content
    conversation = Conversation.objects.get(tenant=tenant, external_id="bench-otlp")
    # The transcript is the last run's history: each inherited message was recognised, none stored twice.
    assert conversation.entries.count() == history_length, (conversation.entries.count(), history_length)
    report = []
    for end in range(args.every, args.runs + 1, args.every):
        window = sorted(times[max(0, end - 10) : end])
        report.append(
            {
                "runs_before": end - 1,
                "history_messages": 4 * end,
                "median_ms": round(statistics.median(window), 1),
                "p95_ms": round(window[min(len(window) - 1, int(len(window) * 0.95))], 1),
            }
        )
    print(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M"),
                "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                "load": os.getloadavg(),
                "first_post_ms": round(times[0], 1),
                "windows_of_10_posts": report,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
