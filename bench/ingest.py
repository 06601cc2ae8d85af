"""Ingestion on PostgreSQL, as agents and imports drive it.

    .venv/bin/python bench/ingest.py import [--runs 1000] [--trials 3] [--command-process]
                                                                            bulk import throughput and storage
    .venv/bin/python bench/ingest.py posts [--sizes 10,100,1000,5000] [--shape independent|compacted]
                                                                            one POST as a conversation grows
    .venv/bin/python bench/ingest.py harness-store [--runs 1000] [--command-process]
                                                                            import_sessions of a harness store
    .venv/bin/python bench/ingest.py import-memory [--messages 340000]      peak RSS importing a large tenant file
    .venv/bin/python bench/ingest.py writers [--writers 8] [--server-workers 2]  concurrent writers, aggregate
    .venv/bin/python bench/ingest.py big-snapshot [--messages 50000]        one huge snapshot: refused or audited
    (every command takes --database-url, default postgres://root@127.0.0.1:5432/sd_bench_ingest, and --citus: the
    URL is the local Citus cluster's coordinator, e.g. postgres://root@127.0.0.1:5441/sd_bench_ingest, and the
    database is made on every node by cluster.sh reset, migrated and distributed by distribute_tenants;
    bench/citus_bench.py)

`import`:
The payloads come from real agents (sessions_app.demo.scenarios.threaded_payloads: FunctionModel runs threaded
through message_history, compaction on some) and are cached in bench/out/. Each trial starts from empty tables and
imports the whole file as `import_sessions` does: one transaction, transcripts recovered, audited and indexed.
In process it times that ingestion of the file already read; `--command-process` (on `import` and
`harness-store`) times `manage.py import_sessions` in a process of its own instead, as a user runs it: the
interpreter's and Django's start, reading and validating the file, and the search index settled are in it.
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


def setup(database_url: str, citus: bool = False) -> None:
    import citus_bench
    import psycopg

    if citus:
        citus_bench.reset_database(database_url)
    else:
        admin = database_url.rsplit("/", 1)[0] + "/postgres"
        name = database_url.rsplit("/", 1)[1]
        with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    import tests.testenv  # noqa: F401  (a SECRET_KEY and plain-HTTP hosts, as the suite runs; DEBUG stays off)

    django.setup()
    from django.core.management import call_command

    if citus:
        schema = citus_bench.migrate_and_distribute()
        print(json.dumps({"citus": {**citus_bench.cluster_facts(), **schema}}), flush=True)
    else:
        call_command("migrate", verbosity=0)


def database_label() -> str:
    from django.db import connection

    from sessions_app.tenancy.citus import has_citus

    return "citus" if has_citus(connection) else connection.vendor


def payloads(runs: int) -> Path:
    cache = ROOT / "bench" / "out" / f"threaded-{runs}.jsonl"
    if not cache.exists():
        from tests.scenarios import threaded_payloads

        cache.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        rows = threaded_payloads(runs)
        with cache.open("w") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
        print(f"recorded {runs} runs with real agents in {time.perf_counter() - started:.1f} s -> {cache}")
    return cache


def empty_tables() -> None:
    from django.db import connection

    # No fold runs in this process (the fold worker is a process of its own, not started here).
    with connection.cursor() as cursor:
        # The search tail and tombstones hold document ids without a foreign key (triggers keep them), and a
        # snapshot's message references have none in the database (sessions_app 0024), so the cascade from the
        # tenants does not reach them: with identities restarted they would collide.
        cursor.execute(
            "TRUNCATE sessions_app_tenant, search_app_unfoldeddocument, search_app_deleteddocument,"
            " search_app_postingblock, sessions_app_snapshotmessage RESTART IDENTITY CASCADE"
        )


def table_bytes(tables: list[str]) -> int:
    import citus_bench
    from django.db import connection

    size = citus_bench.size_function("pg_total_relation_size", database_label() == "citus")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # Citus 13 passes an unqualified VACUUM on to every shard
        # Summed over partitions (a partitioned table's parent holds no rows of its own), on Citus over shards too.
        query = f"SELECT coalesce((SELECT sum({size}(relid))::bigint FROM pg_partition_tree(%s)), {size}(%s))"
        return sum(int(cursor.execute(query, [table, table]).fetchone()[0]) for table in tables)


def bench_import(args: argparse.Namespace) -> None:
    path = payloads(args.runs)

    from sessions_app.ingest.importers import read_import_file
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import SnapshotMessage, StoredMessage, Tenant, TranscriptEntry

    batch = read_import_file(path)
    received = sum(len(p.messages) for p in batch.snapshots)
    timings = []
    load_at_start = os.getloadavg()
    for _ in range(args.trials):
        empty_tables()
        tenant = Tenant.objects.create(slug="bench", name="Bench")
        if args.command_process:
            timings.append(import_command(path))
            continue
        started = time.perf_counter()
        ingest_snapshots(tenant, batch.snapshots, source="server", via="import")
        timings.append(time.perf_counter() - started)
    distinct = StoredMessage.objects.count()
    transcript = TranscriptEntry.objects.count()
    message_bytes = table_bytes(["sessions_app_storedmessage"])
    store_bytes = table_bytes(["sessions_app_storedmessage", "sessions_app_snapshot", "sessions_app_snapshotmessage"])
    raw_bytes = sum(len(line) for line in path.read_bytes().splitlines())
    median = statistics.median(timings)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "door": DOORS[args.command_process],
        "database": database_label(),
        "load_at_start": load_at_start,
        "load": os.getloadavg(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "runs": args.runs,
        "snapshots": len(batch.snapshots),
        "messages_received": received,
        "snapshot_refs": SnapshotMessage.objects.count(),
        "distinct_messages": distinct,
        "transcript_messages": transcript,
        "trials_s": [round(t, 2) for t in timings],
        "median_s": round(median, 2),
        "received_messages_per_s": round(received / median),
        "distinct_messages_per_s": round(distinct / median),
        "bytes_per_distinct_message_messages_table": round(message_bytes / distinct),
        "bytes_per_distinct_message_whole_store": round(store_bytes / distinct),
        "payload_bytes_as_sent": raw_bytes,
    }
    print(json.dumps(report, indent=2))


def _quantiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[max(0, round(0.95 * len(ordered)) - 1)] * 1000, 1),
    }


class Runs:
    """Independent runs of a real agent (FunctionModel), one conversation, as API payloads step by step."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.count = 0

    def next_run(self) -> list[dict]:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import FunctionModel

        city = f"City {self.count}"  # each run asks about its own city, as independent conversations do

        def model(messages, info):
            returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
            if returns:
                return ModelResponse(parts=[TextPart(f"The weather is {returns[0].content}.")])
            return ModelResponse(parts=[ToolCallPart("get_weather", {"city": city}, tool_call_id=f"call-{city}")])

        agent = Agent(FunctionModel(model), system_prompt="You are a weather assistant.")

        @agent.tool_plain
        def get_weather(city: str) -> str:
            return f"sunny in {city}"

        result = agent.run_sync(f"Weather in {city}?")
        messages = ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json")
        run_id = f"{self.conversation_id}-r{self.count}"
        self.count += 1
        return [
            {
                "conversation_id": self.conversation_id,
                "run_id": run_id,
                "step": step,
                "messages": messages[: 2 + 2 * step],
            }
            for step in range(2)
        ]


def _post(client, key: str, payload: dict) -> float:
    started = time.perf_counter()
    response = client.post(
        "/api/v1/snapshots", json.dumps(payload), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    elapsed = time.perf_counter() - started
    assert response.status_code in (200, 201), response.content
    return elapsed


class CompactedThread:
    """One conversation of runs threaded through `message_history`, each compacted by the harness's
    `SlidingWindowCompaction`, recorded once by real agents (FunctionModel) and cached in bench/out/."""

    def __init__(self, total_runs: int) -> None:
        cache = ROOT / "bench" / "out" / f"compacted-thread-{total_runs}.jsonl"
        if not cache.exists():
            from dataclasses import replace

            from pydantic_ai_harness.step_persistence import InMemoryStepStore

            from sessions_app.demo.plans import generate_conversations
            from sessions_app.demo.scenarios import record_plan, store_as_payloads

            started = time.perf_counter()
            plan = generate_conversations(1, seed=7, min_runs=total_runs, max_runs=total_runs)[0]
            plan = replace(plan, compaction="sliding_window", max_messages=12, keep_messages=6)
            store = InMemoryStepStore()
            record_plan(plan, store, conversation_id="compacted-thread")
            cache.parent.mkdir(parents=True, exist_ok=True)
            with cache.open("w") as out:
                for row in store_as_payloads(store):
                    out.write(json.dumps(row) + "\n")
            print(f"recorded {total_runs} compacted threaded runs in {time.perf_counter() - started:.1f} s -> {cache}")
        by_run: dict[str, list[dict]] = {}
        for line in cache.read_text().splitlines():
            payload = json.loads(line)
            by_run.setdefault(payload["run_id"], []).append(payload)
        self._runs = list(by_run.values())
        self.count = 0

    def next_run(self) -> list[dict]:
        self.count += 1
        return self._runs[self.count - 1]


def bench_posts(args: argparse.Namespace) -> None:
    """p95 of one POST (the first step of a new run, and the next step of the running run) at each size."""
    from django.db import connection
    from django.test import Client

    from sessions_app.ingest.payloads import parse_snapshot
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key

    load_at_start = os.getloadavg()
    empty_tables()
    tenant = Tenant.objects.create(slug="bench", name="Bench")
    _, key = create_api_key(tenant, "server")
    client = Client()
    sizes = [int(s) for s in args.sizes.split(",")]
    runs: Runs | CompactedThread = (
        Runs("grow") if args.shape == "independent" else CompactedThread(max(sizes) + len(sizes) * args.samples)
    )
    report = []
    for size in sizes:
        while runs.count < size:  # grow in batches, as an import would
            batch = [p for _ in range(min(250, size - runs.count)) for p in runs.next_run()]
            ingest_snapshots(tenant, [parse_snapshot(p) for p in batch], source="server", via="import")
        with connection.cursor() as cursor:
            # As autovacuum would have by now: with the statistics of the empty tables, PostgreSQL reads a whole
            # conversation's transcript to update three of its rows.
            cursor.execute("ANALYZE")
        first, following = [], []
        for _ in range(args.samples):
            step_one, *later = runs.next_run()
            first.append(_post(client, key, step_one))
            following.extend(_post(client, key, step) for step in later)
        row = {"runs": size, "new_run_first_step": _quantiles(first), "next_step": _quantiles(following)}
        print(json.dumps(row), flush=True)
        report.append(row)
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "database": database_label(),
        "shape": args.shape,
        "load_at_start": load_at_start,
        "load": os.getloadavg(),
        "posts": report,
    }
    print(json.dumps(summary, indent=2))


def bench_writers(args: argparse.Namespace) -> None:
    """Aggregate throughput of N writers into different conversations over real connections, against one.

    The server is the production one (gunicorn, `--server-workers` sync worker processes, WEB_CONCURRENCY's
    default of 2 on this 2-core machine); the writers are threads of this process, waiting on the network."""
    import socket
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key

    load_at_start = os.getloadavg()
    empty_tables()
    tenant = Tenant.objects.create(slug="bench", name="Bench")
    _, key = create_api_key(tenant, "server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(args.server_workers), "--chdir", str(ROOT), "--log-level", "warning"],
        env={**os.environ},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/api/v1/snapshots"
    for _ in range(200):
        try:
            httpx.get(f"http://127.0.0.1:{port}/login", timeout=1)  # any answer: the workers are up
            break
        except httpx.TransportError:
            time.sleep(0.1)

    def writer(name: str) -> list[float]:
        runs, times = Runs(name), []
        with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {key}"}) as http:
            for _ in range(args.posts // 2):
                for payload in runs.next_run():
                    started = time.perf_counter()
                    response = http.post(url, content=json.dumps(payload))
                    times.append(time.perf_counter() - started)
                    assert response.status_code == 201, response.text
        return times

    results = {}
    for writers in (1, args.writers):
        started = time.perf_counter()
        with ThreadPoolExecutor(writers) as pool:
            times = [t for batch in pool.map(writer, [f"w{writers}-{i}" for i in range(writers)]) for t in batch]
        elapsed = time.perf_counter() - started
        results[writers] = {"posts": len(times), "posts_per_s": round(len(times) / elapsed, 1), **_quantiles(times)}
        print(json.dumps({"writers": writers, **results[writers], "load": os.getloadavg()}), flush=True)
    server.terminate()
    server.wait()
    ratio = results[args.writers]["posts_per_s"] / results[1]["posts_per_s"]
    summary = {"date": time.strftime("%Y-%m-%d %H:%M"), "database": database_label(), "load_at_start": load_at_start}
    print(json.dumps({**summary, "load": os.getloadavg(), "speedup": round(ratio, 2)}))


def harness_store(runs: int) -> Path:
    """A pydantic-ai-harness SqliteStepStore holding `runs` runs in one conversation, 10 messages each (a prompt,
    four tool calls and their results, the answer), written by real agents through StepPersistence; cached."""
    path = ROOT / "bench" / "out" / f"harness-{runs}.db"
    if path.exists():
        return path
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai_harness.step_persistence import SqliteStepStore, StepPersistence

    def model(messages, info):
        done = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
        if done < 4:
            return ModelResponse(parts=[ToolCallPart("lookup", {"item": f"part {done}"}, tool_call_id=f"c{done}")])
        return ModelResponse(parts=[TextPart("All four parts are in stock.")])

    agent = Agent(FunctionModel(model), system_prompt="You check stock.")

    @agent.tool_plain
    def lookup(item: str) -> str:
        return f"{item}: 12 in stock"

    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    store = SqliteStepStore(database=str(path))
    for index in range(runs):
        persistence = StepPersistence(store=store, agent_name="stock")
        agent.run_sync(f"Is order {index} in stock?", conversation_id="one-conversation", capabilities=[persistence])
    print(f"recorded {runs} runs into a harness SqliteStepStore in {time.perf_counter() - started:.1f} s -> {path}")
    return path


def bench_harness_store(args: argparse.Namespace) -> None:
    """import_sessions of a harness store with `--runs` runs in one conversation, from empty tables."""
    from django.core.management import call_command

    from sessions_app.models import Tenant, TranscriptEntry

    path = harness_store(args.runs)
    timings = []
    for _ in range(args.trials):
        empty_tables()
        Tenant.objects.create(slug="bench", name="Bench")
        if args.command_process:
            timings.append(import_command(path))
            continue
        started = time.perf_counter()
        call_command("import_sessions", "--tenant", "bench", str(path), verbosity=0)
        timings.append(time.perf_counter() - started)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "door": DOORS[args.command_process],
        "load": os.getloadavg(),
        "runs": args.runs,
        "transcript_messages": TranscriptEntry.objects.count(),
        "trials_s": [round(t, 2) for t in timings],
        "median_s": round(statistics.median(timings), 2),
    }
    print(json.dumps(report, indent=2))


def tenant_file(messages: int) -> Path:
    """A JSONL file of about `messages` received messages for one tenant: conversations of 10 independent runs,
    each run's two snapshots (4 and 10 messages) as the API receives them. One real agent run (FunctionModel) is
    the template; every run gets its own words, ids and tool-call ids, so nothing deduplicates."""
    path = ROOT / "bench" / "out" / f"tenant-{messages}.jsonl"
    if path.exists():
        return path
    template = json.loads(harness_template())
    per_run = 14  # 4 + 10 messages received
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for run in range(messages // per_run):
            text = json.dumps(template).replace("ORDERID", f"call-{run}")
            run_messages = json.loads(text.replace("ORDER", f"order {run} of batch {run * 7919 % 104729}"))
            for step, count in ((1, 4), (4, 10)):
                row = {
                    "conversation_id": f"tenant-conv-{run // 10}",
                    "run_id": f"tenant-run-{run}",
                    "step": step,
                    "started_at": f"2026-01-01T00:00:{run % 60:02d}Z",
                    "messages": run_messages[:count],
                }
                out.write(json.dumps(row) + "\n")
    return path


def harness_template() -> str:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def model(messages, info):
        done = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
        if done < 4:
            call = ToolCallPart("lookup", {"item": f"ORDER part {done}"}, tool_call_id=f"ORDERID-{done}")
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("All four parts of ORDER are in stock and ship tomorrow.")])

    agent = Agent(FunctionModel(model), system_prompt="You check stock.")

    @agent.tool_plain
    def lookup(item: str) -> str:
        return f"{item}: 12 in stock"

    result = agent.run_sync("Is ORDER in stock?")
    return ModelMessagesTypeAdapter.dump_json(result.all_messages()).decode()


def import_command(path: Path) -> float:
    """Seconds `manage.py import_sessions --tenant bench PATH` takes in a process of its own, as a user runs it:
    the interpreter's and Django's start, reading the file, the import, and the search index settled."""
    import subprocess

    started = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "import_sessions", "--tenant", "bench", str(path)],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "DATABASE_URL": os.environ["DATABASE_URL"]},
    )
    return time.perf_counter() - started


def bench_import_memory(args: argparse.Namespace) -> None:
    """Peak RSS of `manage.py import_sessions` on a large tenant file, in a process of its own."""
    import resource

    from sessions_app.models import Tenant, TranscriptEntry

    path = tenant_file(args.messages)
    empty_tables()
    Tenant.objects.create(slug="bench", name="Bench")
    elapsed = import_command(path)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load": os.getloadavg(),
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "messages_received": sum(len(json.loads(line)["messages"]) for line in path.open()),
        "transcript_messages": TranscriptEntry.objects.count(),
        "seconds": round(elapsed, 1),
        "peak_rss_mb": round(peak_kib / 1024),
    }
    print(json.dumps(report, indent=2))


def bench_big_snapshot(args: argparse.Namespace) -> None:
    """A snapshot of many short messages: refused by the documented cap, and the audit time under the cap."""
    from django.conf import settings
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    from sessions_app.audit import gates
    from sessions_app.ingest.payloads import IngestError, SnapshotPayload, check_snapshot_size

    def history(count: int) -> list:
        return [
            ModelRequest(parts=[UserPromptPart(f"line {i}")]) if i % 3 else ModelResponse(parts=[TextPart(f"ok {i}")])
            for i in range(count)
        ]

    limit = settings.SESSIONDESK_MAX_SNAPSHOT_MESSAGES
    try:
        check_snapshot_size(SnapshotPayload("c", "r", "", "complete", history(args.messages)), limit)
        refused = None
    except IngestError as error:
        refused = error.message
    from model_messages.serialization import dump_message

    under = history(limit)
    stored = tuple(dump_message(m) for m in under)
    started = time.perf_counter()
    gates.run_gates(
        gates.AuditContext(
            run_id="r",
            conversation_id="c",
            now=__import__("datetime").datetime.now(__import__("datetime").UTC),
            stored_messages=stored,
        ),
        under,
    )
    audit_s = time.perf_counter() - started
    print(
        json.dumps({"messages": args.messages, "refused": refused, "cap": limit, "audit_at_cap_s": round(audit_s, 2)})
    )


COMMAND_PROCESS = "time manage.py import_sessions in a process of its own (the user's door), not the import in process"
DOORS = {True: "manage.py import_sessions, a process of its own", False: "in process"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default="postgres://root@127.0.0.1:5432/sd_bench_ingest")
    parser.add_argument(
        "--citus",
        action="store_true",
        help="--database-url is the local Citus cluster's coordinator: make the database (sd_bench_*) on every node "
        "(cluster.sh reset), migrate, distribute_tenants",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    imports = commands.add_parser("import")
    imports.add_argument("--runs", type=int, default=1000)
    imports.add_argument("--trials", type=int, default=3)
    imports.add_argument("--command-process", action="store_true", help=COMMAND_PROCESS)
    posts = commands.add_parser("posts")
    posts.add_argument("--sizes", default="10,100,1000,5000")
    posts.add_argument("--samples", type=int, default=20)
    posts.add_argument("--shape", choices=("independent", "compacted"), default="independent",
                       help="independent runs, or one thread compacted by a sliding window")
    memory = commands.add_parser("import-memory")
    memory.add_argument("--messages", type=int, default=340_000)
    harness = commands.add_parser("harness-store")
    harness.add_argument("--runs", type=int, default=1000)
    harness.add_argument("--trials", type=int, default=3)
    harness.add_argument("--command-process", action="store_true", help=COMMAND_PROCESS)
    writers = commands.add_parser("writers")
    writers.add_argument("--writers", type=int, default=8)
    writers.add_argument("--posts", type=int, default=40, help="posts per writer")
    writers.add_argument("--server-workers", type=int, default=2, help="gunicorn worker processes")
    big = commands.add_parser("big-snapshot")
    big.add_argument("--messages", type=int, default=50_000)
    args = parser.parse_args()
    setup(args.database_url, args.citus)
    commands_by_name = {
        "import": bench_import,
        "posts": bench_posts,
        "harness-store": bench_harness_store,
        "import-memory": bench_import_memory,
        "writers": bench_writers,
        "big-snapshot": bench_big_snapshot,
    }
    commands_by_name[args.command](args)


if __name__ == "__main__":
    main()
