"""The conversation list's review clauses as the history grows: `score:NAME>=N`, `label:X` and `sort:NAME`.

    .venv/bin/python bench/review.py [--sizes 10 100 1000 5000] [--requests 30] [--messages-per-run 20] \
        [--database postgres://root@127.0.0.1:5432/sd_bench_review]

One tenant per size (`review-10`, `review-100`, …) in one database, so each is timed beside the others' rows, as
a tenant is; the list page is timed in each with each clause. Everything is written
through the product's own doors: runs through `ingest_snapshots` (what POST /api/v1/snapshots calls; each run
a snapshot of `--messages-per-run` pydantic-ai messages, two runs a conversation), score names through
`define_score` and scores through `set_score` (what POST /api/v1/scores and the conversation page call), each
with its audit event. Per conversation: an evaluation key's `helpfulness` (1 to 5) on the conversation and on
each run, a reviewer's `helpfulness` on a third of them, `escalate` (yes on a tenth, no on a fifth) and a
`topic` category on half.

Server time is Django answering in process through the test client (middleware, session and permission checks,
queries, rendering) after a warm-up pass, as bench/pages.py measures it; "sql" is the part spent in the
database (summed over the request's queries). A tenant already built is reused (migrations are applied first, so
a new index is measured on the same rows); `--fresh` drops the database first. Results go to
bench/results/review.json and print as the table docs/BENCHMARKS.md shows.
"""

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RUNS_PER_CONVERSATION = 2
TOPICS = ("billing", "shipping", "returns", "other")
CASES = {
    "list, first page (no clause)": "",
    "list, score:helpfulness>=4": "score:helpfulness>=4",
    "list, score:helpfulness=1 (rare)": "score:helpfulness=1",
    "list, label:escalate": "label:escalate",
    "list, label:billing (a category)": "label:billing",
    "list, sort:helpfulness": "sort:helpfulness",
    "list, sort:helpfulness:asc": "sort:helpfulness:asc",
    "list, all three: score:helpfulness>=4 label:escalate sort:helpfulness": (
        "score:helpfulness>=4 label:escalate sort:helpfulness"
    ),
}


def configure(url: str, fresh: bool) -> None:
    """bench/pages.py's steps (which cannot be imported here: it puts bench/ first on the path, where
    bench/masking.py hides the masking package), and `fresh` drops the database first."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0].replace("postgres://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    import tests.testenv  # noqa: F401  (a SECRET_KEY and plain-HTTP hosts, as the suite runs; DEBUG stays off)

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run_payload(conversation: str, run: int, messages: int, at: datetime) -> dict:
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    history: list = []
    turn = 0
    while len(history) < messages:
        order = f"ORD-{run:02d}{turn:03d}"
        call_id = f"{conversation}-{run}-{turn}"
        history += [
            ModelRequest(parts=[UserPromptPart(f"Where is order {order} of {conversation}?", timestamp=at)]),
            ModelResponse(parts=[ToolCallPart("lookup_order", {"order": order}, call_id)], timestamp=at),
            ModelRequest(parts=[ToolReturnPart("lookup_order", f"{order}: shipped", call_id, timestamp=at)]),
            ModelResponse(parts=[TextPart(f"Order {order} has shipped.")], timestamp=at),
        ]
        turn += 1
    return {
        "conversation_id": conversation,
        "run_id": f"{conversation}-run-{run}",
        "agent": "support_agent",
        "state": "complete",
        "started_at": (at + timedelta(minutes=run)).isoformat(),
        "messages": json.loads(ModelMessagesTypeAdapter.dump_json(history[:messages])),
    }


def define_scores(tenant) -> None:
    from sessions_app.review import scores
    from sessions_app.review.score_values import ScoreKind, ScoreShape

    scores.define_score(tenant, ScoreShape("helpfulness", ScoreKind.NUMERIC, 1, 5), actor="bench")
    scores.define_score(tenant, ScoreShape("escalate", ScoreKind.BOOLEAN), actor="bench")
    scores.define_score(tenant, ScoreShape("topic", ScoreKind.CATEGORICAL, categories=TOPICS), actor="bench")


def build(tenant, conversations: int, messages: int, rng: random.Random) -> dict:
    """`conversations` conversations (two runs each) through ingestion, then their scores through set_score."""
    from sessions_app.ingest.payloads import parse_snapshot
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import Conversation
    from sessions_app.review import scores
    from sessions_app.review.targets import Target

    started = time.perf_counter()
    start = datetime(2026, 11, 1, tzinfo=UTC)
    names = [f"{tenant.slug}-{n:05d}" for n in range(conversations)]
    for offset in range(0, len(names), 50):
        batch = []
        for n, name in enumerate(names[offset : offset + 50], start=offset):
            at = start - timedelta(minutes=n * 7)
            batch += [parse_snapshot(run_payload(name, r, messages, at)) for r in range(RUNS_PER_CONVERSATION)]
        ingest_snapshots(tenant, batch, source="server", via="api")
    ingested = time.perf_counter() - started
    written = 0
    for conversation in Conversation.objects.filter(tenant=tenant, external_id__in=names).order_by("pk"):
        marks: list[tuple[Target, str, int | bool | str, str]] = [
            (Target(), "helpfulness", rng.randint(1, 5), "api-key:evaljob"),
            *[
                (
                    Target(run_id=f"{conversation.external_id}-run-{r}"),
                    "helpfulness",
                    rng.randint(1, 5),
                    "api-key:evaljob",
                )
                for r in range(RUNS_PER_CONVERSATION)
            ],
        ]
        if rng.random() < 1 / 3:
            marks.append((Target(), "helpfulness", rng.randint(1, 5), "user:reviewer"))
        roll = rng.random()
        if roll < 0.3:
            marks.append((Target(), "escalate", roll < 0.1, "user:reviewer"))
        if rng.random() < 0.5:
            marks.append((Target(), "topic", rng.choice(TOPICS), "user:reviewer"))
        for target, name, value, author in marks:
            scores.set_score(tenant, conversation, target, name, value, author=author)
        written += len(marks)
    return {
        "ingest_s": round(ingested, 1),
        "scores_s": round(time.perf_counter() - started - ingested, 1),
        "scores": written,
    }


class SqlTime:
    """Time spent in the database, summed over the queries it wraps."""

    def __init__(self) -> None:
        self.ms = 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.ms += (time.perf_counter() - started) * 1000


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def time_case(client, url: str, repeat: int) -> dict:
    from django.db import connection

    for _ in range(3):
        assert client.get(url).status_code == 200, url  # warm-up, and a check the page works
    wall, sql = [], []
    for _ in range(repeat):
        timer = SqlTime()
        with connection.execute_wrapper(timer):
            started = time.perf_counter()
            response = client.get(url)
            wall.append((time.perf_counter() - started) * 1000)
        sql.append(timer.ms)
        assert response.status_code == 200, (url, response.status_code)
    return {
        "median_ms": round(statistics.median(wall), 1),
        "p95_ms": round(percentile(wall, 0.95), 1),
        "sql_median_ms": round(statistics.median(sql), 1),
        "sql_p95_ms": round(percentile(sql, 0.95), 1),
        "rows": response.content.count(b"<tr data-nav-item"),
    }


def score_query_work(client, url: str) -> dict:
    """What the request's queries that read scores cost in the database, by EXPLAIN (ANALYZE, BUFFERS): pages
    touched (buffers hit or read) count the work itself, which a loaded machine does not change."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    pages, ms = 0, 0.0
    for query in captured.captured_queries:
        if "sessions_app_score" not in query["sql"] or not query["sql"].lstrip().upper().startswith("SELECT"):
            continue
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + query["sql"])
            plan = cursor.fetchone()[0]
        plan = json.loads(plan)[0] if isinstance(plan, str) else plan[0]
        pages += plan["Plan"]["Shared Hit Blocks"] + plan["Plan"]["Shared Read Blocks"]
        ms += plan["Execution Time"]
    return {"score_queries_pages": pages, "score_queries_ms": round(ms, 2)}


def member_client(tenant):  # an admin of this tenant only, so the list shows its rows
    from django.contrib.auth import get_user_model
    from django.test import Client

    from sessions_app.models import Membership

    user, _ = get_user_model().objects.get_or_create(username=f"bench-{tenant.slug}")
    Membership.objects.get_or_create(tenant=tenant, user=user, defaults={"role": "admin"})
    client = Client()
    client.force_login(user)
    return client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="postgres://root@127.0.0.1:5432/sd_bench_review")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000], help="runs in the tenant")
    parser.add_argument("--messages-per-run", type=int, default=20)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--fresh", action="store_true", help="drop the database and build every tenant anew")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "review.json"))
    args = parser.parse_args()
    configure(args.database, args.fresh)

    from django.db import connection

    from sessions_app.models import Conversation, Run, Score, Tenant, TranscriptEntry

    report: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "database": f"PostgreSQL {connection.cursor().connection.info.server_version}",
        "load_average_at_start": os.getloadavg(),
        "sizes": [],
    }
    for runs in args.sizes:
        slug = f"review-{runs}"
        tenant = Tenant.objects.filter(slug=slug).first()
        built: dict = {}
        if tenant is None:
            conversations = max(1, runs // RUNS_PER_CONVERSATION)
            print(f"building {slug}: {runs} runs ({conversations} conversations) …", flush=True)
            tenant = Tenant.objects.create(slug=slug, name=slug)
            define_scores(tenant)
            built = build(tenant, conversations, args.messages_per_run, random.Random(args.seed + runs))
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        client = member_client(tenant)
        size: dict = {
            "runs": Run.objects.filter(tenant=tenant).count(),
            "conversations": Conversation.objects.filter(tenant=tenant).count(),
            "messages": TranscriptEntry.objects.filter(tenant=tenant).count(),
            "scores": Score.objects.filter(tenant=tenant).count(),
            "build": built,
            "load_average": os.getloadavg(),
            "results": {},
        }
        for name, query in CASES.items():
            url = "/conversations/" + (f"?q={quote(query)}" if query else "")
            size["results"][name] = time_case(client, url, args.requests) | score_query_work(client, url)
            print(f"  {name}: {size['results'][name]}", flush=True)
        size["load_average_after"] = os.getloadavg()
        report["sizes"].append(size)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2))

    head = " | ".join(f"{s['runs']:,} runs" for s in report["sizes"])
    print(f"\nscore queries: pages touched / execution ms (EXPLAIN ANALYZE)\n| case | {head} |")
    for name in CASES:
        cells = " | ".join(
            f"{r['score_queries_pages']} / {r['score_queries_ms']}"
            for r in (s["results"][name] for s in report["sizes"])
        )
        print(f"| {name} | {cells} |")
    head = " | ".join(f"{s['runs']:,} runs ({s['messages']:,} msgs, {s['scores']:,} scores)" for s in report["sizes"])
    print(f"\nmedian / p95 ms (sql median)\n| case | {head} |\n| --- |" + " ---: |" * len(report["sizes"]))
    for name in CASES:
        cells = " | ".join(
            f"{r['median_ms']} / {r['p95_ms']} ({r['sql_median_ms']})"
            for r in (s["results"][name] for s in report["sizes"])
        )
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()
