"""Search benchmark: build a corpus with bulk inserts, time queries per class and scope, compare with the harness.

    # PostgreSQL, 1M messages, in its own database (created if missing):
    .venv/bin/python bench/search.py --database postgres://root@127.0.0.1:5432/sd_bench --messages 1000000
    # SQLite (the embedded default), 100k messages, in bench/.data/:
    .venv/bin/python bench/search.py --database sqlite --messages 100000
    # The users' path (issue 25): import_sessions, HTTP against manage.py serve, FTS5 and ts_rank_cd peers:
    .venv/bin/python bench/search.py --users-path --database postgres://root@127.0.0.1:5432/sd_bench_users
    # The local 3-node Citus cluster (issue 23): the database made on every node by cluster.sh reset, migrated
    # and distributed by manage.py distribute_tenants, then the same build and queries:
    .venv/bin/python bench/search.py --citus --database postgres://root@127.0.0.1:5441/sd_bench_search \
        --messages 1000000

The corpus: 10 tenants (the largest holds 34%), conversations of 20 to 2,000 messages (log-uniform), one run per
200 messages, roles cycling user/assistant/tool call/tool result, text drawn from a 50,000-word vocabulary with a
Zipf distribution (s = 1.07), message lengths log-normal (median about 30 words). Rows go in with COPY
(PostgreSQL) or executemany (SQLite), straight into the tables, not through the API. Generated text is lower-case
ASCII words, for which search_app.tokenize yields exactly the words (checked on a sample), so the documents'
terms are written without re-tokenizing a million messages; tokenizer speed is reported separately.

Queries go through search_app.service.run_search (ranking, snippets and redaction included), in process,
after one warm-up pass. Classes: rare word (vocabulary ranks 5,000-40,000), common word (ranks 5-60), three
words (one common, two mid-frequency), phrase (two adjacent words taken from a stored message). Scopes:
tenant (the largest tenant) and conversation (random conversations of the largest tenant).

The same run times pydantic-ai-harness's ConversationSearch on one 10,000-message conversation (also stored
in the corpus) against our conversation-scoped search of the same conversation, and prints the ratio.
"""

import argparse
import asyncio
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TENANT_SHARES = [0.34, 0.16, 0.12, 0.10, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02]
VOCABULARY_SIZE = 50_000
ZIPF_S = 1.07
ROLES = ["user", "assistant", "tool_call", "tool_result"]
BIG_CONVERSATION = 10_000
START = datetime(2026, 1, 1, tzinfo=UTC)


def configure(database: str, citus: bool = False, reuse: bool = False) -> None:
    if citus:
        os.environ["DATABASE_URL"] = database
        if not reuse:
            import citus_bench

            citus_bench.reset_database(database)
            # The session's SET below reaches only the coordinator: the workers build the shards' GIN and vacuum
            # them with their own connections, which take the database's setting (Citus passes it on to them).
            citus_bench.alter_database(database, "SET maintenance_work_mem = '1GB'")
    elif database == "sqlite":
        os.environ.pop("DATABASE_URL", None)
        data_dir = ROOT / "bench" / ".data"
        data_dir.mkdir(parents=True, exist_ok=True)
        os.environ["SESSIONDESK_DATA_DIR"] = str(data_dir)
    else:
        os.environ["DATABASE_URL"] = database
        _create_postgres_database(database)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    import tests.testenv  # noqa: F401  (a SECRET_KEY and plain-HTTP hosts, as the suite runs; DEBUG stays off)

    django.setup()


def _create_postgres_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0].replace("postgres://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def vocabulary(rng: random.Random) -> list[str]:
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["qu", "th", "sh", "ch"]
    words: dict[str, None] = {}
    while len(words) < VOCABULARY_SIZE:
        words["".join(rng.choice(syllables) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))] = None
    return list(words)


class TextSource:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        weights = [1.0 / (rank + 1) ** ZIPF_S for rank in range(VOCABULARY_SIZE)]
        self.cum = list(_accumulate(weights))

    def message(self) -> str:
        length = max(3, min(400, int(math.exp(self.rng.gauss(3.4, 0.8)))))
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=length))


def _accumulate(values):
    total = 0.0
    for value in values:
        total += value
        yield total


def conversation_sizes(total: int, rng: random.Random) -> list[int]:
    """Log-uniform sizes from 20 to 2,000 adding up to `total`."""
    sizes = []
    remaining = total
    while remaining >= 20:
        size = int(math.exp(rng.uniform(math.log(20), math.log(2000))))
        if remaining - size < 20:
            size = remaining if remaining <= 2000 else remaining - 20
        sizes.append(size)
        remaining -= size
    return sizes


def build(messages: int, seed: int) -> dict:
    """Insert the corpus; returns build timings and ids needed by the queries."""
    from django.db import connection, transaction

    from search_app import folding
    from search_app.models import ConversationIndex
    from search_app.tokenize import index_terms
    from sessions_app.models import Conversation, Run, StoredMessage, Tenant

    text = TextSource(seed)
    rng = random.Random(seed + 1)
    sample = [text.message() for _ in range(200)]
    assert all(index_terms(s) == s.split(" ") for s in sample), "generated text must tokenize to its words"

    tenants = [Tenant.objects.create(slug=f"bench-{i}", name=f"Bench {i}") for i in range(len(TENANT_SHARES))]
    stored = {
        t.id: StoredMessage.objects.create(tenant=t, sha256=f"bench-{t.id}", content_hash="bench", data="{}")
        for t in tenants
    }
    timings = {"entries_and_documents_load_s": 0.0}
    big_texts: list[str] = []
    sample_texts: list[str] = []
    entry_id = 1
    layout = {"tenants": {}, "big_conversation": None}
    drop_gin = connection.vendor == "postgresql"
    if drop_gin:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS searchdoc_tenant_tsv")
    for number, (tenant, share) in enumerate(zip(tenants, TENANT_SHARES, strict=True)):
        count = int(messages * share)
        with_big = number == 0 and count >= 2 * BIG_CONVERSATION
        sizes = conversation_sizes(count - (BIG_CONVERSATION if with_big else 0), rng)
        if with_big:
            sizes.append(BIG_CONVERSATION)
        count = sum(sizes)
        conversations = Conversation.objects.bulk_create(
            [Conversation(tenant=tenant, external_id=f"t{number}-c{i}", message_count=s) for i, s in enumerate(sizes)]
        )
        runs_rows, entries, documents, stats = [], [], [], []
        for conversation, size in zip(conversations, sizes, strict=True):
            run_count = max(1, size // 200)
            runs = Run.objects.bulk_create(
                [
                    Run(
                        tenant=tenant,
                        conversation=conversation,
                        run_id=f"{conversation.external_id}-r{r}",
                        agent_name=f"agent-{r % 3}",
                        started_at=START,
                    )
                    for r in range(run_count)
                ]
            )
            runs_rows.extend(runs)
            total_length = 0
            first_document = entry_id  # documents take their entry's id (_load)
            for position in range(size):
                body = text.message()
                if number == 0 and (size == BIG_CONVERSATION or len(sample_texts) < 10_000):
                    (big_texts if size == BIG_CONVERSATION else sample_texts).append(body)
                run = runs[min(position // 200, run_count - 1)]
                role = ROLES[position % 4]
                stamp = START + timedelta(seconds=position * 7)
                length = body.count(" ") + 1
                total_length += length
                entries.append(
                    (
                        entry_id,
                        tenant.id,
                        conversation.id,
                        position,
                        run.id,
                        stored[tenant.id].id,
                        role,
                        body,
                        stamp,
                        False,
                        False,
                    )
                )
                documents.append(
                    (entry_id, tenant.id, conversation.id, run.id, run.agent_name, position, role, stamp, length, body)
                )
                entry_id += 1
            stats.append(
                ConversationIndex(
                    conversation=conversation,
                    tenant=tenant,
                    documents=size,
                    total_length=total_length,
                    indexed_at=START,
                    first_document=first_document,
                    last_document=entry_id - 1,
                )
            )
            if size == BIG_CONVERSATION:
                layout["big_conversation"] = conversation.external_id
            if len(entries) >= 50_000:
                timings["entries_and_documents_load_s"] += _load(entries, documents)
                entries, documents = [], []
        timings["entries_and_documents_load_s"] += _load(entries, documents)
        ConversationIndex.objects.bulk_create(stats, batch_size=1000)
        layout["tenants"][tenant.slug] = {"messages": count, "conversations": len(sizes)}
        print(f"  tenant {tenant.slug}: {count} messages in {len(sizes)} conversations", flush=True)
    started = time.perf_counter()
    if drop_gin:
        with connection.cursor() as cursor:
            # On Citus the shards' indexes are built by the workers' connections, which have the database's
            # maintenance_work_mem of 1GB (set by configure(), for the VACUUM below too), not this session's.
            cursor.execute("SET maintenance_work_mem = '1GB'")
            cursor.execute("CREATE INDEX searchdoc_tenant_tsv ON search_app_searchdocument USING gin (tenant_id, tsv)")
        timings["gin_index_build_s"] = time.perf_counter() - started
    started = time.perf_counter()
    folding.fold_everything()
    timings["fold_into_blocks_s"] = time.perf_counter() - started
    print(f"  folded into blocks in {timings['fold_into_blocks_s']:.1f} s", flush=True)
    started = time.perf_counter()
    if drop_gin:
        with connection.cursor() as cursor:
            # Index-only scans of the postings need the visibility map that a bulk load has not set yet.
            cursor.execute("VACUUM ANALYZE")
        timings["vacuum_analyze_s"] = time.perf_counter() - started
    else:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        timings["analyze_s"] = time.perf_counter() - started
    layout["big_texts"] = big_texts
    layout["sample_texts"] = sample_texts
    layout["vocabulary"] = text.words
    return {"timings": timings, "layout": layout}


def layout_from_database(seed: int) -> dict:
    """Rebuild what `build` returns from an existing bench database (`--reuse`): same vocabulary, same texts."""
    from sessions_app.models import Conversation, Tenant, TranscriptEntry

    tenants = Tenant.objects.filter(slug__startswith="bench-").order_by("id")
    big = Conversation.objects.filter(tenant__slug="bench-0", message_count=BIG_CONVERSATION).first()
    first = TranscriptEntry.objects.filter(tenant__slug="bench-0")
    if big is not None:
        first = first.exclude(conversation=big)
    return {
        "tenants": {
            t.slug: {
                "messages": TranscriptEntry.objects.filter(tenant=t).count(),
                "conversations": t.conversations.count(),
            }
            for t in tenants
        },
        "big_conversation": big.external_id if big else None,
        "big_texts": list(
            TranscriptEntry.objects.filter(conversation=big).order_by("position").values_list("text", flat=True)
        )
        if big
        else [],
        "sample_texts": list(first.order_by("id").values_list("text", flat=True)[:10_000]),
        "vocabulary": TextSource(seed).words,
    }


def _load(entries: list[tuple], documents: list[tuple]) -> float:
    from django.db import connection, transaction

    entry_columns = (
        "id, tenant_id, conversation_id, position, run_id, message_id, role, text, timestamp, "
        "recovered_from_compaction, summary_artifact, facts"
    )
    doc_columns = (
        "id, entry_id, tenant_id, conversation_id, run_id, agent_name, position, role, timestamp, length, terms"
    )
    with transaction.atomic():
        if connection.vendor == "postgresql":
            raw = connection.connection
            with raw.cursor() as cursor:
                with cursor.copy(f"COPY sessions_app_transcriptentry ({entry_columns}) FROM STDIN") as copy:
                    for row in entries:
                        copy.write_row((*row, "{}"))
                entries_done = time.perf_counter()
                with cursor.copy(f"COPY search_app_searchdocument ({doc_columns}) FROM STDIN") as copy:
                    for row in documents:
                        copy.write_row((row[0], *row))
        else:
            adapt = connection.ops.adapt_datetimefield_value
            with connection.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO sessions_app_transcriptentry ({entry_columns}) VALUES ({', '.join(['%s'] * 12)})",
                    [(*row[:8], adapt(row[8]), *row[9:], "{}") for row in entries],
                )
                entries_done = time.perf_counter()
                cursor.executemany(
                    f"INSERT INTO search_app_searchdocument ({doc_columns}) VALUES ({', '.join(['%s'] * 11)})",
                    [(row[0], *row[:7], adapt(row[7]), *row[8:]) for row in documents],
                )
    # Only the documents (and their full-text index) count towards the index build time.
    return time.perf_counter() - entries_done if entries else 0.0


def _partitioned_size(function: str, relation: str, citus: bool = False) -> str:
    """A table's or index's size, summed over its partitions when it has them (a partitioned parent holds none);
    on Citus summed over the shards too."""
    import citus_bench

    function = citus_bench.size_function(function, citus)
    return (
        f"coalesce((SELECT sum({function}(relid))::bigint FROM pg_partition_tree('{relation}')), "
        f"{function}('{relation}'))"
    )


def sizes(citus: bool = False) -> dict:
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT "
                + ", ".join(
                    _partitioned_size(function, relation, citus)
                    for function, relation in [
                        ("pg_total_relation_size", "search_app_searchdocument"),
                        ("pg_relation_size", "searchdoc_tenant_tsv"),
                        ("pg_relation_size", "search_app_searchdocument"),
                        ("pg_total_relation_size", "sessions_app_transcriptentry"),
                        ("pg_total_relation_size", "search_app_postingblock"),
                        ("pg_relation_size", "postingblock_term"),
                        ("pg_total_relation_size", "search_app_conversationindex"),
                        ("pg_total_relation_size", "search_app_deleteddocument"),
                    ]
                )
                + ", (SELECT sum(pg_column_size(tsv)) FROM search_app_searchdocument)"
            )
            total, gin, heap, entries, blocks, blocks_index, statistics, tombstones, tsv = cursor.fetchone()
            return {
                "search_tables_and_indexes_bytes": total + blocks + statistics + tombstones,
                "posting_blocks_bytes": blocks,
                "posting_blocks_index_bytes": blocks_index,
                "statistics_bytes": statistics,
                "gin_index_bytes": gin,
                "tsvector_column_bytes": int(tsv or 0),
                "documents_heap_bytes": heap,
                "documents_with_indexes_bytes": total,
                "transcript_entries_bytes": entries,
            }
        try:
            cursor.execute(
                "SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'search_app%' OR name LIKE 'searchdoc%' "
                "OR name LIKE 'postingblock%' OR name LIKE 'deleteddoc%' OR name LIKE 'convindex%' "
                "OR name LIKE 'sqlite_autoindex_search_app%' GROUP BY name"
            )
            rows = dict(cursor.fetchall())
        except Exception:  # dbstat is optional in SQLite builds
            rows = {}
        return {
            "by_object_bytes": rows,
            "search_total_bytes": sum(rows.values()),
            "fts5_bytes": sum(v for k, v in rows.items() if k.startswith("search_app_fts")),
            "posting_blocks_bytes": sum(v for k, v in rows.items() if "postingblock" in k),
        }


def pick_queries(layout: dict, rng: random.Random, count: int) -> dict[str, list[str]]:
    words = layout["vocabulary"]
    phrases = []
    for body in rng.sample(layout["sample_texts"], count):
        tokens = body.split(" ")
        i = rng.randrange(len(tokens) - 1)
        phrases.append(f'"{tokens[i]} {tokens[i + 1]}"')
    return {
        "rare": [words[rng.randrange(5_000, 40_000)] for _ in range(count)],
        "common": [words[rng.randrange(5, 60)] for _ in range(count)],
        "three_words": [
            f"{words[rng.randrange(5, 60)]} {words[rng.randrange(200, 3000)]} {words[rng.randrange(200, 3000)]}"
            for _ in range(count)
        ],
        "phrase": phrases,
    }


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


def time_queries(queries: dict[str, list[str]], scope: str, conversations: list[str]) -> dict:
    from search_app.service import run_search
    from sessions_app.models import Tenant

    tenant = Tenant.objects.get(slug="bench-0")
    results = {}
    for name, items in queries.items():
        timings, hits = [], []
        for repeat in range(2):  # the first pass warms caches and is not counted
            for i, query in enumerate(items):
                options = {"scope": "tenant"} if scope == "tenant" else {"conversation_id": conversations[i]}
                started = time.perf_counter()
                response = run_search(tenant=tenant, query=query, **options)
                elapsed = (time.perf_counter() - started) * 1000
                if repeat:
                    timings.append(elapsed)
                    hits.append(response.total_matches)
        results[name] = {
            "median_ms": round(statistics.median(timings), 2),
            "p95_ms": round(percentile(timings, 0.95), 2),
            "queries": len(timings),
            "median_matching_documents": statistics.median(hits),
        }
        print(
            f"  {scope:12} {name:11} median {results[name]['median_ms']:8.2f} ms  p95 {results[name]['p95_ms']:8.2f} ms"
            f"  (median {results[name]['median_matching_documents']} matching)",
            flush=True,
        )
    return results


def harness_comparison(layout: dict, queries: dict[str, list[str]]) -> dict:
    """ConversationSearch over the same 10,000 messages (an in-memory HistorySource, so only its search is timed)."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai_harness.conversation_search._toolset import ConversationSearchToolset
    from pydantic_ai_harness.step_persistence._types import RunRecord

    from search_app.service import run_search
    from sessions_app.models import Tenant

    conversation_id = layout["big_conversation"]
    messages = [
        ModelRequest(parts=[UserPromptPart(content=body)]) if i % 2 == 0 else ModelResponse(parts=[TextPart(body)])
        for i, body in enumerate(layout["big_texts"])
    ]
    runs = [RunRecord(run_id=f"{conversation_id}-r{r}", conversation_id=conversation_id) for r in range(50)]

    class MemorySource:
        async def list_runs(self):
            return runs

        async def run_history(self, *, run_id: str):
            r = int(run_id.rsplit("-r", 1)[1])
            return messages[r * 200 : (r + 1) * 200]

    toolset = ConversationSearchToolset(
        MemorySource(), tool_id="cs", max_matches=10, context_lines=5, bm25_k1=1.2, bm25_b=0.75, scope="conversation"
    )

    class Ctx:
        pass

    ctx = Ctx()
    ctx.conversation_id = conversation_id
    sample = [q for items in queries.values() for q in items[:3]]
    harness_ms = []
    for query in sample:
        started = time.perf_counter()
        asyncio.run(toolset.search_conversation_history(ctx, query.replace('"', "")))
        harness_ms.append((time.perf_counter() - started) * 1000)
    tenant = Tenant.objects.get(slug="bench-0")
    ours_ms = []
    for repeat in range(2):
        for query in sample:
            started = time.perf_counter()
            run_search(tenant=tenant, query=query.replace('"', ""), conversation_id=conversation_id)
            if repeat:
                ours_ms.append((time.perf_counter() - started) * 1000)
    result = {
        "queries": len(sample),
        "harness_median_ms": round(statistics.median(harness_ms), 1),
        "sessiondesk_median_ms": round(statistics.median(ours_ms), 2),
        "sessiondesk_p95_ms": round(percentile(ours_ms, 0.95), 2),
    }
    result["speedup"] = round(result["harness_median_ms"] / result["sessiondesk_median_ms"], 1)
    print(
        f"  harness ConversationSearch on {len(messages)} messages: median {result['harness_median_ms']} ms; "
        f"ours {result['sessiondesk_median_ms']} ms; {result['speedup']}x",
        flush=True,
    )
    return result


def tokenizer_speed(layout: dict) -> dict:
    from search_app.tokenize import index_terms

    texts = layout["sample_texts"][:2000]
    words = sum(t.count(" ") + 1 for t in texts)
    started = time.perf_counter()
    for body in texts:
        index_terms(body)
    elapsed = time.perf_counter() - started
    return {"words_per_second": int(words / elapsed), "messages_per_second": int(len(texts) / elapsed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True, help="'sqlite' or a postgres:// URL of a bench database")
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40, help="queries per class and scope")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--reuse", action="store_true", help="time queries on the corpus a previous run built")
    parser.add_argument(
        "--citus",
        action="store_true",
        help="--database is a Citus coordinator of ../shared/citus/cluster.sh: the database (sd_bench_*) is made on "
        "every node by cluster.sh reset, migrated and distributed by distribute_tenants (bench/citus_bench.py)",
    )
    parser.add_argument(
        "--users-path",
        action="store_true",
        help="import through import_sessions, search over HTTP (manage.py serve), FTS5 and ts_rank_cd peers "
        "(bench/search_users_path.py; PostgreSQL only; its database is dropped and made again)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="--users-path: times each query is asked")
    parser.add_argument("--port", type=int, help="--users-path: the server's port (default: any free one)")
    parser.add_argument(
        "--compare-with",
        type=Path,
        help="--users-path --reuse: serve that checkout beside this one and ask each query of both in turn "
        "(ports --port and --port + 1)",
    )
    parser.add_argument(
        "--serve-from", type=Path, help="--users-path: the checkout whose manage.py serve answers (default: this one)"
    )
    args = parser.parse_args()
    if args.citus and args.database == "sqlite":
        parser.error("--citus takes a postgres:// URL of the coordinator")
    if args.users_path:
        import search_users_path

        if args.compare_with is not None:
            if not args.reuse:
                parser.error("--compare-with searches an earlier import: add --reuse")
            search_users_path.compare(
                args.database, args.messages, args.queries, args.repeats, args.seed, args.compare_with, args.port
            )
            return
        search_users_path.main(
            args.database,
            args.messages,
            args.queries,
            args.repeats,
            args.seed,
            args.citus,
            reuse=args.reuse,
            port=args.port,
            serve_from=args.serve_from,
        )
        return
    configure(args.database, citus=args.citus, reuse=args.reuse)

    from django.core.management import call_command
    from django.db import connection

    if args.reuse:
        layout = layout_from_database(args.seed)
        report = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
            "load_average_at_start": os.getloadavg(),
            "database": _database_label(args.citus),
            "messages": args.messages,
            "reused_corpus": True,
            "tenants": layout["tenants"],
        }
        run_queries(report, layout, args)
        return
    if connection.vendor == "sqlite":
        db_file = Path(connection.settings_dict["NAME"])
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db_file}{suffix}").unlink(missing_ok=True)
    elif not args.citus:  # a Citus database was made afresh on every node by cluster.sh reset
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    citus: dict = {}
    if args.citus:
        import citus_bench

        citus["schema"] = citus_bench.migrate_and_distribute()
        citus.update(citus_bench.cluster_facts())
        citus["workers_maintenance_work_mem"] = citus_bench.worker_setting("maintenance_work_mem")
    else:
        call_command("migrate", verbosity=0)
    print(f"Building {args.messages} messages on {_database_label(args.citus)}...", flush=True)
    load_at_build = os.getloadavg()
    started = time.perf_counter()
    built = build(args.messages, args.seed)
    built["timings"]["total_build_s"] = time.perf_counter() - started
    layout = built.pop("layout")
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "database": _database_label(args.citus),
        "messages": args.messages,
        "tenants": layout["tenants"],
        "build": {k: round(v, 1) for k, v in built["timings"].items()},
        "sizes": sizes(args.citus),
        "load_average_at_build_start": load_at_build,
        "load_average_at_build_end": os.getloadavg(),
    }
    if citus:
        report["citus"] = citus
    index_seconds = (
        report["build"]["entries_and_documents_load_s"]
        + report["build"].get("gin_index_build_s", 0)
        + report["build"].get("fold_into_blocks_s", 0)
        + report["build"].get("vacuum_analyze_s", 0)
    )
    report["index_build_s_per_million"] = round(index_seconds * 1_000_000 / args.messages, 1)
    print(json.dumps({k: report[k] for k in ("build", "sizes", "index_build_s_per_million")}, indent=1), flush=True)

    report["load_average_at_start"] = os.getloadavg()
    run_queries(report, layout, args)


def _database_label(citus: bool) -> str:
    from django.db import connection

    return "citus" if citus else connection.vendor


def run_queries(report: dict, layout: dict, args) -> None:
    from django.db import connection

    from sessions_app.models import Conversation

    rng = random.Random(args.seed + 2)
    queries = pick_queries(layout, rng, args.queries)
    # In insertion order: without an ORDER BY, Citus returns the shards' rows in another order than one PostgreSQL,
    # and the same seed would pick other conversations.
    conversation_ids = list(
        Conversation.objects.filter(tenant__slug="bench-0").order_by("id").values_list("external_id", flat=True)
    )
    conversations = [rng.choice(conversation_ids) for _ in range(args.queries)]
    report["tenant_scope"] = time_queries(queries, "tenant", conversations)
    report["conversation_scope"] = time_queries(queries, "conversation", conversations)
    if layout["big_conversation"]:
        report["harness_comparison"] = harness_comparison(layout, queries)
    report["tokenizer"] = tokenizer_speed(layout)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    suffix = "-reused" if report.get("reused_corpus") else ""
    report["load_average_at_end"] = os.getloadavg()
    label = "citus" if getattr(args, "citus", False) else connection.vendor
    path = out / f"search-{label}-{args.messages}{suffix}.json"
    path.write_text(json.dumps(report, indent=1))
    print(f"Wrote {path}")


if __name__ == "__main__":
    main()
