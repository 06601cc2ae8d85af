"""Issue 28's approvals pending, as a conversation's history grows: the time of one more run's ingest into a
conversation whose first run ended waiting for an approval nobody gives.

    flock /tmp/bench.lock .venv/bin/python bench/approvals.py [--sizes 10 100 1000 5000] [--requests 20] \
        [--database postgres://root@127.0.0.1:5432/h28_bench] [--port 8128]

Everything arrives through the product's doors, with `manage.py serve` (gunicorn, 2 sync workers, production
settings) answering over HTTP:
- one tenant per size (`approvals-10`, …) and its server key by `manage.py create_tenant` and `create_api_key`;
- the waiting run by POST /v1/traces: a real pydantic-ai run (FunctionModel) ending on DeferredToolRequests for a
  `requires_approval=True` tool, exported by pydantic-ai's own OpenTelemetry instrumentation;
- the prior runs by `manage.py import_sessions` of a JSONL file of API-shaped snapshots (4 messages a run: a
  question, a tool call, its result, the answer), all in that one conversation, after the waiting run;
- the timed runs by POST /api/v1/snapshots, one new run each, `--requests` times after a warm-up.

Each request is a new connection, timed from the client. The database is this script's own: dropped and made
again. Results go to bench/results/approvals.json and print as the table docs/BENCHMARKS.md shows.
"""

import argparse
import json
import os
import platform
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from review import analyze, fresh_database, manage, percentile
from served import ProductionServer

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data" / "approvals"


def waiting_trace(conversation: str) -> bytes:
    """A real harness run that ends waiting for approval of `wipe`, as OTLP protobuf."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent, DeferredToolRequests
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(lambda messages, info: ModelResponse(parts=[ToolCallPart("wipe", {}, tool_call_id="wipe-1")])),
        system_prompt="You keep the shop's database tidy.",
        output_type=[str, DeferredToolRequests],
        capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))],
    )
    agent.tool_plain(name="wipe", requires_approval=True)(lambda: "wiped")
    result = agent.run_sync("Wipe the orders table.", conversation_id=conversation)
    assert isinstance(result.output, DeferredToolRequests)
    return encode_spans(memory.get_finished_spans()).SerializeToString()


def run_snapshot(conversation: str, run: str, at: datetime) -> dict:
    stamp = at.isoformat().replace("+00:00", "Z")
    call = f"{run}-lookup"
    return {
        "conversation_id": conversation,
        "run_id": run,
        "agent": "shop_agent",
        "state": "complete",
        "started_at": stamp,
        "messages": [
            {"kind": "request", "parts": [
                {"part_kind": "system-prompt", "content": "You keep the shop's database tidy.", "timestamp": stamp},
                {"part_kind": "user-prompt", "content": f"Where is order {run}?", "timestamp": stamp}]},
            {"kind": "response", "timestamp": stamp, "parts": [
                {"part_kind": "tool-call", "tool_name": "lookup", "args": {"order": run}, "tool_call_id": call}]},
            {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "lookup",
                                           "content": "shipped", "tool_call_id": call, "timestamp": stamp}]},
            {"kind": "response", "timestamp": stamp, "parts": [{"part_kind": "text", "content": "It shipped."}]},
        ],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--database", default="postgres://root@127.0.0.1:5432/h28_bench")
    parser.add_argument("--port", type=int, default=8128)
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    fresh_database(args.database)
    server = ProductionServer(
        args.database, args.port, DATA / "server", "bench-approvals-", log=(DATA / "server.log").open("w")
    )
    rows = []
    try:
        for size in args.sizes:
            slug, conversation = f"approvals-{size}", f"waiting-{size}"
            manage(args.database, "create_tenant", slug, "--name", slug)
            key = manage(args.database, "create_api_key", "--tenant", slug, "--kind", "server").strip()
            headers = {"Authorization": f"Bearer {key}"}
            status = server.request("POST", "/v1/traces", waiting_trace(conversation),
                                    {**headers, "Content-Type": "application/x-protobuf"})[0]  # fmt: skip
            if status != 200:
                raise SystemExit(f"the waiting run's trace answered {status}")
            start = datetime.now(UTC) + timedelta(minutes=1)
            path = DATA / f"{slug}.jsonl"
            with path.open("w") as handle:
                for n in range(size):
                    at = start + timedelta(seconds=n)
                    handle.write(json.dumps(run_snapshot(conversation, f"prior-{n:05d}", at)) + "\n")
            built = time.perf_counter()
            manage(args.database, "import_sessions", "--tenant", slug, str(path))
            imported = time.perf_counter() - built
            analyze(args.database)
            ms = []
            for n in range(args.requests + 1):
                at = start + timedelta(seconds=size + n)
                body = json.dumps(run_snapshot(conversation, f"more-{n:03d}", at)).encode()
                status, seconds, _, content = server.request(
                    "POST", "/api/v1/snapshots", body, {**headers, "Content-Type": "application/json"}
                )
                if status not in (200, 201):
                    raise SystemExit(f"a run's snapshot answered {status}: {content[:300]!r}")
                if n:  # the first is the warm-up
                    ms.append(seconds * 1000)
            load = os.getloadavg()
            rows.append({
                "prior_runs": size, "import_s": round(imported, 1), "median_ms": round(statistics.median(ms), 1),
                "p95_ms": round(percentile(ms, 0.95), 1), "load": [round(x, 2) for x in load],
            })  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    finally:
        server.stop()
    result = {"machine": f"{platform.platform()}, {os.cpu_count()} cores", "date": datetime.now(UTC).isoformat(),
              "rows": rows}  # fmt: skip
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "approvals.json").write_text(json.dumps(result, indent=2) + "\n")
    print("| prior runs | import (s) | one more run, median (ms) | p95 (ms) | load average (1, 5, 15 min) |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['prior_runs']:,} | {row['import_s']} | {row['median_ms']} | {row['p95_ms']} | "
              f"{', '.join(str(x) for x in row['load'])} |")  # fmt: skip


if __name__ == "__main__":
    main()
