"""One run's OTLP export, and one POST of a whole history, as production serves them (issue 24's Done means).

    .venv/bin/python bench/otlp_http.py [--database-url postgres://root@127.0.0.1:5432/bench24] [--port 8124]
        [--parts otlp-simple,otlp-batch,posts] [--samples 20] [--repeats 1] [--workers 2]

`manage.py serve` (gunicorn, its workers and its fold worker, DEBUG off, as production runs) serves a PostgreSQL
database of the bench's own; a fresh tenant per trial. A real agent (tests/agents.weather_agent, FunctionModel: a
prompt, a tool call, its result, the answer, so four messages a run) runs threaded through `message_history` with
pydantic-ai's own instrumentation, exported by the official OTLP/HTTP exporter
(opentelemetry-exporter-otlp-proto-http, protobuf) to /v1/traces:

- `otlp-simple`: SimpleSpanProcessor, so each run's four spans (agent run, two model requests, the tool) are
  four exports; one run's figure is the sum of its four exports' times.
- `otlp-batch`: BatchSpanProcessor (its defaults); four conversations thread side by side and the provider is
  flushed after each round, so one export carries four runs (16 spans); one run's figure is the export's time
  divided by four.

At 40 messages the samples are the tenth run of 20 threads of their own (history 36 before, 40 after); at 1,000,
runs 241 to 260 of one thread (964 to 1,040 after), every run before them exported too. `posts`: the same agent's
history after each run as POST /api/v1/snapshots bodies (a client that sends the whole history each step: each
run's snapshot carries all of it), timed at 8 and 12 messages (runs 2 and 3 of 20 threads) and at about 1,000
(runs 241 to 260 of one). Each thread's exported transcript is checked against the agent's own history (message
for message, the times pydantic-ai stamps aside). `--repeats N` runs every trial N times, the sizes in turn, and
reports the pooled samples (with each repeat's p95 beside them): one trial's 20 samples put its p95 at the second
slowest, which a few seconds of a busy host move.
"""

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ingest import setup  # noqa: E402  (bench/ingest.py: creates the database, migrates)


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def figures(values: Sequence[float]) -> dict[str, Any]:
    return {"n": len(values), "median_ms": round(statistics.median(values), 1), "p95_ms": round(p95(values), 1)}


def start_server(database_url: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-secret-key-not-for-production-0123456789"),
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_COOKIES": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DEBUG": "false",
    }
    log = open(ROOT / "bench" / "out" / "otlp_http-server.log", "ab")
    command = [sys.executable, str(ROOT / "manage.py"), "serve", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", str(workers)]
    server = subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/openapi.json", timeout=2)
            return server
        except Exception:
            if server.poll() is not None:
                raise SystemExit("the server exited; see bench/out/otlp_http-server.log") from None
            time.sleep(0.5)
    raise SystemExit("the server did not answer in 120 s")


SERVER_GROUP = 0  # the server's process group (gunicorn's master and workers), once started


def server_cpu_ms() -> float:
    """CPU time the server's processes have used so far: a figure a loaded machine changes far less than wall time."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == SERVER_GROUP:  # pgrp, then utime and stime in clock ticks
            ticks += int(fields[11]) + int(fields[12])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def stop_server(server: subprocess.Popen[bytes]) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=60)


def fresh_tenant(label: str) -> tuple[Any, str]:
    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key

    slug = f"bench24-{label}-{time.time_ns()}"
    tenant = Tenant.objects.create(slug=slug, name=slug)
    return tenant, create_api_key(tenant, "server")[1]


class TimedExporter:
    """The official exporter, each export timed (the client's own encoding included, as an application pays it)."""

    def __init__(self, endpoint: str, key: str) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.inner = OTLPSpanExporter(endpoint=endpoint, headers={"Authorization": f"Bearer {key}"}, timeout=120)
        self.times: list[float] = []
        self.operations: list[str] = []  # each export's spans' GenAI operations, to break a run's time down
        self.failures = 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        began = time.perf_counter()
        result = self.inner.export(spans)
        self.times.append((time.perf_counter() - began) * 1000)
        self.operations.append("+".join(sorted({str(s.attributes.get("gen_ai.operation.name")) for s in spans})))
        if result is not SpanExportResult.SUCCESS:
            self.failures += 1
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def without_times(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for message in messages:
        message.pop("timestamp", None)
        for part in message["parts"]:
            part.pop("timestamp", None)
    return messages


def check_exact(tenant: Any, conversation_id: str, history: list[Any], differences: set[str]) -> None:
    """Adds to `differences` each field in which the stored transcript differs from the agent's own history."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from sessions_app.models import Conversation
    from sessions_app.transcripts.export import export_conversation

    conversation = Conversation.objects.get(tenant=tenant, external_id=conversation_id)
    exported = without_times(json.loads("".join(export_conversation(conversation, "json"))))
    truth = without_times(ModelMessagesTypeAdapter.dump_python(history, mode="json"))
    if len(exported) != len(truth):
        differences.add(f"length {len(exported)} for {len(truth)}")
    for stored, true in zip(exported, truth, strict=False):
        differences.update(name for name in {*stored, *true} if stored.get(name) != true.get(name))


def otlp_trial(
    port: int, mode: str, threads: int, runs: int, sampled: int, differences: set[str], parts: dict[str, list[float]]
) -> list[float]:
    """`threads` groups thread `runs` runs each; the last `sampled` runs of each are timed. Returns the samples,
    and adds each sampled export's time to `parts` under its spans' operations (a run's time broken down), and
    the server's CPU time for the run under 'server CPU'."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from tests.agents import weather_agent

    width = 4 if mode == "batch" else 1  # conversations side by side, one export per round in batch mode
    tenant, key = fresh_tenant(f"otlp-{mode}")
    exporter = TimedExporter(f"http://127.0.0.1:{port}/v1/traces", key)
    provider = TracerProvider()
    provider.add_span_processor(
        BatchSpanProcessor(exporter) if mode == "batch" else SimpleSpanProcessor(exporter)  # type: ignore[arg-type]
    )
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent = weather_agent()
    samples: list[float] = []
    for group in range(threads):
        names = [f"{mode}-{group}-{lane}" for lane in range(width)]
        histories: dict[str, Any] = dict.fromkeys(names)
        for n in range(runs):
            before, cpu = len(exporter.times), server_cpu_ms()
            for name in names:
                result = agent.run_sync(
                    f"Weather, question {n}?", message_history=histories[name], conversation_id=name,
                    capabilities=[instrumentation],
                )  # fmt: skip
                histories[name] = result.all_messages()
            if mode == "batch":
                provider.force_flush()
            if n >= runs - sampled:
                spent = sum(exporter.times[before:])
                parts.setdefault("server CPU", []).append((server_cpu_ms() - cpu) / width)
                for operation, took in zip(exporter.operations[before:], exporter.times[before:], strict=True):
                    parts.setdefault(operation, []).append(took)
                samples.extend([spent / width] if mode == "batch" else [spent])
        for name in names:
            check_exact(tenant, name, histories[name], differences)
    provider.shutdown()
    if exporter.failures:
        raise SystemExit(f"{exporter.failures} exports failed")
    return samples


def post_trial(
    port: int, threads: int, runs: int, sampled: int, differences: set[str], parts: dict[str, list[float]]
) -> list[float]:
    import httpx
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from tests.agents import weather_agent

    tenant, key = fresh_tenant("posts")
    agent = weather_agent()
    samples = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"}) as client:
        for group in range(threads):
            name = f"posts-{group}"
            history = None
            for n in range(runs):
                history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
                body = json.dumps(
                    {
                        "conversation_id": name,
                        "run_id": f"{name}-run-{n}",
                        "step": 1,
                        "state": "complete",
                        "messages": ModelMessagesTypeAdapter.dump_python(history, mode="json"),
                    }
                ).encode()
                began, cpu = time.perf_counter(), server_cpu_ms()
                response = client.post(
                    "/api/v1/snapshots", content=body, headers={"Content-Type": "application/json"}, timeout=120
                )
                if n >= runs - sampled:
                    samples.append((time.perf_counter() - began) * 1000)
                    parts.setdefault("server CPU", []).append(server_cpu_ms() - cpu)
                if response.status_code != 201:
                    raise SystemExit(f"POST answered {response.status_code}: {response.text[:300]}")
            check_exact(tenant, name, history or [], differences)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default="postgres://root@127.0.0.1:5432/bench24")
    parser.add_argument("--port", type=int, default=8124)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--parts", default="otlp-simple,otlp-batch,posts")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument(
        "--repeats", type=int, default=1, help="run every trial this many times in turn; figures pool the samples"
    )
    parser.add_argument("--long-runs", type=int, default=260, help="runs of the long thread (4 messages each)")
    args = parser.parse_args()
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    setup(args.database_url)
    server = start_server(args.database_url, args.port, args.workers)
    global SERVER_GROUP
    SERVER_GROUP = server.pid
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "server": f"manage.py serve, {args.workers} gunicorn workers, PostgreSQL",
        "load_before": os.getloadavg(),
    }
    parts = args.parts.split(",")
    try:
        trials: dict[str, Callable[[set[str], dict[str, list[float]]], list[float]]] = {}
        for mode in ("simple", "batch"):
            if f"otlp-{mode}" in parts:
                trials[f"otlp-{mode} at 40 messages"] = lambda d, o, m=mode: otlp_trial(
                    args.port, m, args.samples, 10, 1, d, o
                )
                trials[f"otlp-{mode} at 1,000 messages"] = lambda d, o, m=mode: otlp_trial(
                    args.port, m, 1, args.long_runs, args.samples, d, o
                )
        if "posts" in parts:
            trials["post at 8 messages"] = lambda d, o: post_trial(args.port, args.samples, 2, 1, d, o)
            trials["post at 12 messages"] = lambda d, o: post_trial(args.port, args.samples, 3, 1, d, o)
            trials["post at 1,000 messages"] = lambda d, o: post_trial(args.port, 1, args.long_runs, args.samples, d, o)
        pooled: dict[str, list[float]] = {}
        by_repeat: dict[str, list[float]] = {}
        operations: dict[str, dict[str, list[float]]] = {}
        for _ in range(args.repeats):
            # Each repeat runs every trial once, sizes in turn: a slow spell of the host falls on both sizes
            # of a ratio instead of on one trial of it.
            for name, trial in trials.items():
                began = time.perf_counter()
                differences: set[str] = set()
                by_operation = operations.setdefault(name, {})
                samples = trial(differences, by_operation)
                pooled.setdefault(name, []).extend(samples)
                by_repeat.setdefault(name, []).append(round(p95(samples), 1))
                report[name] = {
                    **figures(pooled[name]),
                    "p95_ms by repeat": by_repeat[name],
                    "exports": {operation: figures(times) for operation, times in sorted(by_operation.items())},
                    "load": os.getloadavg(),
                    "trial_s": round(time.perf_counter() - began),
                    # The transcript, message for message, against the agent's own (pydantic-ai's stamped times
                    # aside); every repeat's must be exact.
                    "transcript": "exact" if not differences else f"differs in {sorted(differences)}",
                }
                print(name, json.dumps(report[name]), flush=True)
                if differences:
                    raise SystemExit(f"{name}: the transcript differs in {sorted(differences)}")
    finally:
        stop_server(server)
    for mode in ("simple", "batch"):
        short, long = report.get(f"otlp-{mode} at 40 messages"), report.get(f"otlp-{mode} at 1,000 messages")
        if short and long:
            report[f"otlp-{mode}: p95 at 1,000 / p95 at 40"] = round(long["p95_ms"] / short["p95_ms"], 2)
    if "post at 1,000 messages" in report:
        for small in ("post at 8 messages", "post at 12 messages"):
            report[f"{small}: p95 at 1,000 / p95"] = round(
                report["post at 1,000 messages"]["p95_ms"] / report[small]["p95_ms"], 2
            )
    report["load_after"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
