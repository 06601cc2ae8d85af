"""Bulk-import throughput into PostgreSQL and storage per distinct message, for a 1,000-run threaded store.

    .venv/bin/python bench/ingest.py [--runs 1000] [--trials 3] [--database-url postgres://root@127.0.0.1:5432/sd_bench_ingest]

The payloads come from real agents (sessions_app.demo.scenarios.threaded_payloads: FunctionModel runs threaded
through message_history, compaction on some) and are cached in bench/out/. Each trial starts from empty tables and
imports the whole file as `import_sessions` does: one transaction, transcripts recovered, audited and indexed.
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


def setup(database_url: str) -> None:
    import psycopg

    admin = database_url.rsplit("/", 1)[0] + "/postgres"
    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


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

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE sessions_app_tenant RESTART IDENTITY CASCADE")


def table_bytes(tables: list[str]) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        return sum(
            cursor.execute("SELECT pg_total_relation_size(%s)", [table]).fetchone()[0] for table in tables
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--database-url", default="postgres://root@127.0.0.1:5432/sd_bench_ingest")
    args = parser.parse_args()
    setup(args.database_url)
    path = payloads(args.runs)

    from sessions_app.ingest.importers import read_import_file
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import SnapshotMessage, StoredMessage, Tenant, TranscriptEntry

    batch = read_import_file(path)
    received = sum(len(p.messages) for p in batch.snapshots)
    timings = []
    for _ in range(args.trials):
        empty_tables()
        tenant = Tenant.objects.create(slug="bench", name="Bench")
        started = time.perf_counter()
        ingest_snapshots(tenant, batch.snapshots, source="server", via="import")
        timings.append(time.perf_counter() - started)
    distinct = StoredMessage.objects.count()
    transcript = TranscriptEntry.objects.count()
    message_bytes = table_bytes(["sessions_app_storedmessage"])
    store_bytes = table_bytes(
        ["sessions_app_storedmessage", "sessions_app_snapshot", "sessions_app_snapshotmessage"]
    )
    raw_bytes = sum(len(line) for line in path.read_bytes().splitlines())
    median = statistics.median(timings)
    report = {
        "date": time.strftime("%Y-%m-%d"),
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


if __name__ == "__main__":
    main()
