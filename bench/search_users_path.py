"""Search on the users' path (issue 25), with two peers on the same messages and queries, in one run.

    .venv/bin/python bench/search.py --users-path --database postgres://root@127.0.0.1:5432/sd_bench_users \
        --messages 100000

1. A fresh PostgreSQL database (this mode's own: dropped and made again), migrated; with `--citus`, the database is
   made on every node of the local cluster, migrated and distributed by `distribute_tenants` (bench/citus_bench.py).
2. The corpus of bench/search.py (10 tenants, the largest 34 %, Zipf words, log-normal lengths), written as one
   JSONL file per tenant of API-shaped snapshots (one run of up to 200 user/assistant messages a snapshot) and
   imported with `manage.py import_sessions` in a process of its own, per tenant: the command folds what it wrote
   and ANALYZEs big loads before it returns. Nothing else is run before the searches.
3. `manage.py serve` (gunicorn, 2 sync workers, its fold worker) and searches over HTTP with a server key, a new
   connection per request as a client without keep-alive makes: tenant scope on the largest tenant, and
   conversation scope on random conversations of it; each query `--repeats` times, after one warm-up pass.
4. Peers, in process, on the largest tenant's messages and the same queries: SQLite FTS5 `bm25()` top 10
   (an in-memory database, the default unicode61 tokenizer: the words are lower-case ASCII), and PostgreSQL
   `to_tsvector('simple')` with a GIN index and `ts_rank_cd` top 10 (a table of this database). Three words are
   OR-ed in both, as our query is; a phrase is FTS5's `"a b"` and PostgreSQL's `a <-> b`.

Prints one JSON report: machine, date, load average before and after, import time, and per class and engine the
median and p95 in milliseconds.
"""

import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN_MESSAGES = 200


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(seconds: list[float]) -> dict[str, float]:
    ms = [value * 1000 for value in seconds]
    return {"median_ms": round(statistics.median(ms), 2), "p95_ms": round(percentile(ms, 0.95), 2), "n": len(ms)}


def _message(index: int, text: str, at: datetime) -> dict[str, object]:
    stamp = at.isoformat().replace("+00:00", "Z")
    if index % 2 == 0:
        return {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": text, "timestamp": stamp}]}
    return {"kind": "response", "parts": [{"part_kind": "text", "content": text}], "timestamp": stamp}


def write_corpus(messages: int, seed: int, out: Path) -> dict:
    """One JSONL file per tenant; returns the files, the largest tenant's texts and conversation ids, and words."""
    from search import TENANT_SHARES, TextSource, conversation_sizes

    text = TextSource(seed)
    rng = random.Random(seed + 1)
    out.mkdir(parents=True, exist_ok=True)
    files, largest_texts, largest_conversations = [], [], []
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for number, share in enumerate(TENANT_SHARES):
        path = out / f"tenant-{number}.jsonl"
        files.append(path)
        with path.open("w") as handle:
            for conversation, size in enumerate(conversation_sizes(int(messages * share), rng)):
                conversation_id = f"conv-{number}-{conversation}"
                if number == 0:
                    largest_conversations.append(conversation_id)
                for run, first in enumerate(range(0, size, RUN_MESSAGES)):
                    texts = [text.message() for _ in range(min(RUN_MESSAGES, size - first))]
                    if number == 0:
                        largest_texts += texts
                    at = start + timedelta(minutes=conversation * 10 + run)
                    row = {
                        "conversation_id": conversation_id,
                        "run_id": f"{conversation_id}-run-{run}",
                        "step": len(texts),
                        "started_at": at.isoformat().replace("+00:00", "Z"),
                        "messages": [_message(i, t, at + timedelta(seconds=i)) for i, t in enumerate(texts)],
                    }
                    handle.write(json.dumps(row) + "\n")
    return {"files": files, "texts": largest_texts, "conversations": largest_conversations, "words": text.words}


def pick_queries(words: list[str], texts: list[str], rng: random.Random, count: int) -> dict[str, list[str]]:
    """Rare words (vocabulary ranks 5,000-40,000), common (5-60), three words (one common, two of ranks
    500-5,000), phrases (two adjacent words of a stored message), as bench/search.py picks them."""
    present = {word for text in texts for word in text.split(" ")}
    rare = [w for w in words[5_000:40_000] if w in present]
    phrases = []
    while len(phrases) < count:
        parts = rng.choice(texts).split(" ")
        if len(parts) > 3:
            at = rng.randrange(len(parts) - 1)
            if parts[at] != parts[at + 1]:
                phrases.append(f"{parts[at]} {parts[at + 1]}")
    return {
        "rare": rng.sample(rare, count),
        "common": [rng.choice(words[5:60]) for _ in range(count)],
        "three_words": [
            " ".join([rng.choice(words[5:60]), rng.choice(words[500:5000]), rng.choice(words[500:5000])])
            for _ in range(count)
        ],
        "phrase": [f'"{phrase}"' for phrase in phrases],
    }


def _fts5_match(query: str) -> str:
    if query.startswith('"'):
        return query
    return " OR ".join(query.split(" "))


def _tsquery(query: str) -> str:
    if query.startswith('"'):
        return " <-> ".join(query.strip('"').split(" "))
    return " | ".join(query.split(" "))


def time_fts5(texts: list[str], queries: dict[str, list[str]], repeats: int) -> dict:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE m USING fts5(body)")
    db.executemany("INSERT INTO m(rowid, body) VALUES (?, ?)", enumerate(texts, 1))
    db.commit()
    sql = "SELECT rowid, bm25(m) FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT 10"
    out = {}
    for kind, items in queries.items():
        for query in items:  # warm-up
            db.execute(sql, [_fts5_match(query)]).fetchall()
        seconds = []
        for _ in range(repeats):
            for query in items:
                started = time.perf_counter()
                db.execute(sql, [_fts5_match(query)]).fetchall()
                seconds.append(time.perf_counter() - started)
        out[kind] = summary(seconds)
    return out


def time_postgres_peer(texts: list[str], queries: dict[str, list[str]], repeats: int) -> dict:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_peer_messages")
        cursor.execute(
            "CREATE TABLE bench_peer_messages (id bigint PRIMARY KEY, body text NOT NULL, "
            "tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED)"
        )
        with cursor.copy("COPY bench_peer_messages (id, body) FROM STDIN") as copy:
            for key, body in enumerate(texts, 1):
                copy.write_row((key, body))
        cursor.execute("CREATE INDEX bench_peer_gin ON bench_peer_messages USING gin (tsv)")
        cursor.execute("ANALYZE bench_peer_messages")
        sql = (
            "SELECT id, ts_rank_cd(tsv, q) AS r FROM bench_peer_messages, to_tsquery('simple', %s) q "
            "WHERE tsv @@ q ORDER BY r DESC LIMIT 10"
        )
        out = {}
        for kind, items in queries.items():
            for query in items:
                cursor.execute(sql, [_tsquery(query)])
                cursor.fetchall()
            seconds = []
            for _ in range(repeats):
                for query in items:
                    started = time.perf_counter()
                    cursor.execute(sql, [_tsquery(query)])
                    cursor.fetchall()
                    seconds.append(time.perf_counter() - started)
            out[kind] = summary(seconds)
    return out


def time_http(server, key: str, queries: dict[str, list[str]], repeats: int, scope: dict[str, str] | None,
              conversations: list[str], rng: random.Random) -> dict:  # fmt: skip
    headers = {"Authorization": f"Bearer {key}"}
    out = {}
    for kind, items in queries.items():
        plan = [(query, rng.choice(conversations) if conversations else "") for query in items]

        def path(query: str, conversation: str) -> str:
            params = {"q": query, **(scope or {"conversation_id": conversation})}
            return "/api/v1/search?" + urllib.parse.urlencode(params)

        for query, conversation in plan:
            status = server.request("GET", path(query, conversation), headers=headers)[0]
            if status != 200:
                raise SystemExit(f"search answered {status} for {query!r}")
        seconds = []
        for _ in range(repeats):
            for query, conversation in plan:
                seconds.append(server.request("GET", path(query, conversation), headers=headers)[1])
        out[kind] = summary(seconds)
    return out


def unfolded_after_import() -> dict[str, int]:
    from search_app.models import PostingBlock, SearchDocument, UnfoldedDocument

    return {
        "documents": SearchDocument.objects.count(),
        "unfolded": UnfoldedDocument.objects.count(),
        "blocks": PostingBlock.objects.count(),
    }


def main(
    database: str,
    messages: int,
    queries_per_class: int,
    repeats: int,
    seed: int,
    citus: bool = False,
    *,
    reuse: bool = False,
    port: int | None = None,
    serve_from: Path | None = None,
) -> None:
    """`reuse`: search the corpus an earlier run of the same --messages and --seed imported (no drop, no import);
    `serve_from`: the checkout whose `manage.py serve` answers (default this one), to time two versions alike."""
    import psycopg
    from served import ProductionServer, free_port

    if not database.startswith("postgres"):
        raise SystemExit("--users-path runs on PostgreSQL (the peers include PostgreSQL's ts_rank_cd)")
    if not citus and not reuse:
        name = database.rsplit("/", 1)[1]
        admin = database.rsplit("/", 1)[0].replace("postgres://", "postgresql://", 1) + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    from search import configure

    configure(database, citus=citus)  # on Citus: the database made afresh on every node by cluster.sh reset
    report: dict = {
        "mode": "users' path" + (" on Citus" if citus else ""),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "load_before": [round(v, 2) for v in os.getloadavg()],
        "messages_requested": messages,
        "reused_corpus": reuse,
        "served_from": str(serve_from or ROOT),
    }
    if reuse:
        pass
    elif citus:
        import citus_bench

        report["schema"] = citus_bench.migrate_and_distribute()
        report.update(citus_bench.cluster_facts())
    else:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
    started = time.perf_counter()
    corpus = write_corpus(messages, seed, ROOT / "bench" / ".data" / "users-path")
    report["corpus_write_s"] = round(time.perf_counter() - started, 1)

    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key

    env = {**os.environ, "DATABASE_URL": database}
    import_seconds = []
    for number, path in enumerate([] if reuse else corpus["files"]):
        slug = f"bench-{number}"
        Tenant.objects.create(slug=slug, name=f"Bench {number}")
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "import_sessions", "--tenant", slug, str(path)],
            check=True, env=env, stdout=subprocess.DEVNULL, cwd=ROOT,
        )  # fmt: skip
        import_seconds.append(time.perf_counter() - started)
    if not reuse:
        report["import_s"] = {"total": round(sum(import_seconds), 1), "largest_tenant": round(import_seconds[0], 1)}
    report["index_after_import" if not reuse else "index"] = unfolded_after_import()
    report["largest_tenant_messages"] = len(corpus["texts"])
    key = create_api_key(Tenant.objects.get(slug="bench-0"), "server")[1]

    rng = random.Random(seed + 2)
    queries = pick_queries(corpus["words"], corpus["texts"], rng, queries_per_class)
    data = ROOT / "bench" / ".data" / "users-path-server"
    server = ProductionServer(database, port or free_port(), data, "bench-users-path-", root=serve_from or ROOT)
    try:
        report["http_tenant_scope"] = time_http(server, key, queries, repeats, {"scope": "tenant"}, [], rng)
        report["http_conversation_scope"] = time_http(server, key, queries, repeats, None, corpus["conversations"], rng)
        healthz = server.request("GET", "/healthz")[1]
        report["http_healthz_ms"] = round(healthz * 1000, 2)
    finally:
        server.stop()
    report["peer_sqlite_fts5_bm25"] = time_fts5(corpus["texts"], queries, repeats)
    report["peer_postgres_ts_rank_cd_gin"] = time_postgres_peer(corpus["texts"], queries, repeats)
    report["load_after"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(report, indent=2))


def compare(database: str, messages: int, queries_per_class: int, repeats: int, seed: int, other: Path,
            port: int | None = None) -> None:  # fmt: skip
    """Two checkouts served side by side on the corpus an earlier run imported (`--reuse`), each query asked of
    one then the other (the order alternating), so the load of a shared machine falls on both alike."""
    from search import configure
    from served import ProductionServer, free_port

    configure(database)
    report: dict = {
        "mode": "users' path, two checkouts interleaved",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "load_before": [round(v, 2) for v in os.getloadavg()],
        "messages_requested": messages,
        "this": str(ROOT),
        "other": str(other),
    }
    corpus = write_corpus(messages, seed, ROOT / "bench" / ".data" / "users-path")
    from sessions_app.models import Tenant
    from sessions_app.tenancy.api_keys import create_api_key

    key = create_api_key(Tenant.objects.get(slug="bench-0"), "server")[1]
    rng = random.Random(seed + 2)
    queries = pick_queries(corpus["words"], corpus["texts"], rng, queries_per_class)
    data = ROOT / "bench" / ".data" / "users-path-server"
    first = port or free_port()
    servers = {
        "other": ProductionServer(database, first, data / "other", "bench-users-path-", root=other),
        "this": ProductionServer(database, first + 1 if port else free_port(), data / "this", "bench-users-path-"),
    }
    headers = {"Authorization": f"Bearer {key}"}
    try:
        for scope_name in ("tenant", "conversation"):
            out: dict[str, dict] = {"other": {}, "this": {}}
            for kind, items in queries.items():
                plan = [(query, rng.choice(corpus["conversations"])) for query in items]
                timings: dict[str, list[float]] = {"other": [], "this": []}
                for turn in range(repeats + 1):
                    for query, conversation in plan:
                        params = {"q": query, **({"scope": "tenant"} if scope_name == "tenant" else
                                                 {"conversation_id": conversation})}  # fmt: skip
                        path = "/api/v1/search?" + urllib.parse.urlencode(params)
                        order = ("other", "this") if turn % 2 else ("this", "other")
                        for side in order:
                            status, seconds = servers[side].request("GET", path, headers=headers)[:2]
                            if status != 200:
                                raise SystemExit(f"{side} answered {status} for {query!r}")
                            if turn:  # the first turn warms both up
                                timings[side].append(seconds)
                for side in out:
                    out[side][kind] = summary(timings[side])
            report[f"http_{scope_name}_scope"] = out
    finally:
        for server in servers.values():
            server.stop()
    report["load_after"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(report, indent=2))
