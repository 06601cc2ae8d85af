"""Dashboard page budgets: server time of the conversation list, the overview, a long transcript, a conversation
of 200 runs with its timeline and search as you type.

    .venv/bin/python bench/pages.py [--conversations 100000] [--search-messages 1000000] [--requests 60] \
        [--database postgres://root@127.0.0.1:5432/sd_bench_pages] \
        [--search-database postgres://root@127.0.0.1:5432/sd_bench_pages_search]

Server time is the time Django takes to answer a request in process (middleware, permission checks, queries,
template rendering), measured with the test client after a warm-up pass; no network, no browser.

Data, built once into its own database (rerunning reuses it):
- the list corpus: one tenant with `--conversations` conversations (plus a second tenant with a fifth as many, so
  tenant scoping is exercised), one to three runs each with states, agents and stored audit verdicts (some with
  repairs), activity spread over a year;
- a 2,000-message conversation of pydantic-ai messages (user prompts, tool calls with their results, answers,
  one credential per 50 messages to mask), stored through the product's own ingestion;
- the search corpus of bench/search.py (10 tenants, Zipf text) with `--search-messages` messages, built by that
  script's own `build()` in a database of its own (it loads rows with explicit ids); search as you type is
  timed in its largest tenant (34%).

Each phase runs in its own process (one database per Django process); results merge into
bench/results/pages.json and print as the table docs/BENCHMARKS.md shows.
"""

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))  # after the project: bench/masking.py must not shadow the masking package

LIST_TENANT = "pages-list"
NOISE_TENANT = "pages-noise"
TRANSCRIPT_ID = "pages-transcript-2000"
TIMELINE_ID = "pages-timeline-200-runs"
VERDICTS = [
    ("READY", 0.45),
    ("MISSING OUTCOME RECEIPT", 0.30),
    ("INTERRUPTED TOOL", 0.08),
    ("ORPHAN RESULT REMOVED", 0.04),
    ("WAITING", 0.05),
    ("UNTRUSTED HISTORY", 0.04),
    ("SYSTEM PROMPT GAP", 0.04),
]


def configure(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0].replace("postgres://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    import tests.testenv  # noqa: F401  (a SECRET_KEY and plain-HTTP hosts, as the suite runs; DEBUG stays off)

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _verdict(rng: random.Random) -> str:
    return rng.choices([v for v, _ in VERDICTS], weights=[w for _, w in VERDICTS])[0]


def _listed_conversation(rng: random.Random, tenant, external_id: str):
    """A conversation row with the list columns ingest keeps (issue 26), in plausible ranges."""
    from sessions_app.models import Conversation

    steps = rng.randint(1, 60)
    tokens_in, tokens_out = steps * rng.randint(200, 4000), steps * rng.randint(20, 400)
    unpriced = steps if rng.random() < 0.1 else 0
    return Conversation(
        tenant=tenant,
        external_id=external_id,
        message_count=rng.randint(2, 400),
        first_user_text=f"Where is my refund for order ORD-{rng.randint(1, 99999):05d}? It has been a week.",
        turn_count=rng.randint(1, 20),
        model_step_count=steps,
        tool_call_count=rng.randint(0, steps),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        total_tokens=tokens_in + tokens_out,
        cost_micro_usd=0 if unpriced else (tokens_in * 3 + tokens_out * 15),
        unpriced_steps=unpriced,
        duration_ms=rng.randint(500, 3_600_000),
    )


def build_list_corpus(count: int, seed: int) -> float:
    from django.db import connection, transaction

    from sessions_app.audit.vocabulary import verdict_rank
    from sessions_app.models import Conversation, Run, Tenant
    from sessions_app.models.audit import RunVerdict

    started = time.perf_counter()
    rng = random.Random(seed)
    now = datetime(2026, 11, 1, tzinfo=UTC)
    for slug, total in ((LIST_TENANT, count), (NOISE_TENANT, count // 5)):
        tenant = Tenant.objects.create(slug=slug, name=slug)
        for offset in range(0, total, 5000):
            with transaction.atomic():
                size = min(5000, total - offset)
                conversations = Conversation.objects.bulk_create(
                    [_listed_conversation(rng, tenant, f"{slug}-{offset + i}") for i in range(size)]
                )
                runs = []
                for conversation in conversations:
                    for r in range(rng.choice((1, 1, 2, 3))):
                        runs.append(
                            Run(
                                tenant=tenant,
                                conversation=conversation,
                                run_id=f"{conversation.external_id}-r{r}",
                                agent_name=rng.choice(("support_agent", "billing_agent", "deploy_agent", "triage")),
                                state=rng.choices(("complete", "interrupted", "running"), weights=(90, 6, 4))[0],
                                started_at=now - timedelta(minutes=rng.randint(0, 525_600)),
                            )
                        )
                runs = Run.objects.bulk_create(runs)
                verdicts = []
                for run in runs:
                    verdict = _verdict(rng)
                    repairs = 1 if verdict in ("INTERRUPTED TOOL", "ORPHAN RESULT REMOVED") else 0
                    verdicts.append(
                        RunVerdict(tenant=tenant, run=run, verdict=verdict, repair_count=repairs, updated_at=now)
                    )
                RunVerdict.objects.bulk_create(verdicts)
                worst: dict[int, str] = {}
                for run, row in zip(runs, verdicts, strict=True):
                    if run.conversation_id not in worst or verdict_rank(row.verdict) < verdict_rank(
                        worst[run.conversation_id]
                    ):
                        worst[run.conversation_id] = row.verdict
                for conversation in conversations:
                    conversation.worst_verdict = worst[conversation.pk]
                    conversation.worst_verdict_rank = verdict_rank(worst[conversation.pk])
                    conversation.run_count = sum(1 for run in runs if run.conversation_id == conversation.pk)
                Conversation.objects.bulk_update(
                    conversations, ["worst_verdict", "worst_verdict_rank", "run_count"], batch_size=1000
                )
        # auto_now stamped every row with the build time: spread activity over a year, as real data would be.
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE sessions_app_conversation SET updated_at = %s - (((id * 7919) %% 525600) * interval '1 minute')"
                " WHERE tenant_id = %s",
                [now, tenant.id],
            )
            cursor.execute(
                "UPDATE sessions_app_conversation SET last_activity_at = updated_at WHERE tenant_id = %s", [tenant.id]
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return time.perf_counter() - started


def long_conversation_messages(count: int) -> list:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    stamp = datetime(2026, 6, 1, 9, tzinfo=UTC)
    messages: list = []
    turn = 0
    while len(messages) < count:
        parts = [UserPromptPart(f"Step {turn}: check order ORD-{turn:05d} and its invoice", timestamp=stamp)]
        if turn == 0:
            parts.insert(0, SystemPromptPart("You are a billing agent. Quote exact values."))
        messages.append(ModelRequest(parts=parts))
        call_id = f"call-{turn}"
        messages.append(ModelResponse(parts=[ToolCallPart("lookup_order", {"order": f"ORD-{turn:05d}"}, call_id)]))
        secret = f" api_key=sk-live-{turn:06d}abcdefghijklmnop" if turn % 12 == 0 else ""
        result = f"order ORD-{turn:05d}: 3 items, total {turn * 7 % 900}.50 EUR, status shipped{secret}"
        messages.append(ModelRequest(parts=[ToolReturnPart("lookup_order", result, call_id, timestamp=stamp)]))
        messages.append(ModelResponse(parts=[TextPart(f"Order ORD-{turn:05d} shipped; invoice total confirmed.")]))
        turn += 1
    return messages[:count]


def build_transcript(count: int) -> float:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from sessions_app.ingest.payloads import parse_snapshot
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import Tenant

    started = time.perf_counter()
    tenant = Tenant.objects.get(slug=LIST_TENANT)
    messages = long_conversation_messages(count)
    payload = {
        "conversation_id": TRANSCRIPT_ID,
        "run_id": f"{TRANSCRIPT_ID}-run",
        "agent": "billing_agent",
        "state": "complete",
        "messages": json.loads(ModelMessagesTypeAdapter.dump_json(messages)),
    }
    ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")
    return time.perf_counter() - started


def timeline_payloads(runs: int) -> list[dict]:
    """A conversation of `runs` runs (every fifth a child of the one before), each a prompt, a tool call with
    its result and an answer, with usage and model names on every response: the timeline's worst honest case."""
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

    start = datetime(2026, 5, 1, 8, tzinfo=UTC)
    payloads = []
    for n in range(runs):
        at = start + timedelta(minutes=7 * n)
        call_id = f"tl-call-{n}"
        usage = RequestUsage(input_tokens=900 + n, output_tokens=60, cache_read_tokens=400)
        messages = [
            ModelRequest(parts=[UserPromptPart(f"Run {n}: reconcile invoice INV-{n:04d}", timestamp=at)]),
            ModelResponse(
                parts=[ToolCallPart("lookup_invoice", {"invoice": f"INV-{n:04d}"}, call_id)],
                usage=usage,
                model_name="gpt-5-mini",
                timestamp=at + timedelta(seconds=2),
            ),
            ModelRequest(
                parts=[ToolReturnPart("lookup_invoice", "paid", call_id, timestamp=at + timedelta(seconds=3))]
            ),
            ModelResponse(
                parts=[TextPart(f"INV-{n:04d} is paid.")],
                usage=usage,
                model_name="gpt-5-mini",
                timestamp=at + timedelta(seconds=5),
            ),
        ]
        payloads.append(
            {
                "conversation_id": TIMELINE_ID,
                "run_id": f"{TIMELINE_ID}-run-{n:03d}",
                "parent_run_id": f"{TIMELINE_ID}-run-{n - 1:03d}" if n % 5 else None,
                "agent": "billing_agent",
                "state": "complete",
                "started_at": at.isoformat(),
                "messages": json.loads(ModelMessagesTypeAdapter.dump_json(messages)),
            }
        )
    return payloads


def build_timeline_conversation(runs: int) -> float:
    from sessions_app.ingest.payloads import parse_snapshot
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import Tenant

    started = time.perf_counter()
    tenant = Tenant.objects.get(slug=LIST_TENANT)
    payloads = [parse_snapshot(p) for p in timeline_payloads(runs)]
    ingest_snapshots(tenant, payloads, source="server", via="api")
    return time.perf_counter() - started


def build_search_corpus(messages: int, seed: int) -> dict:
    import search as search_bench  # bench/search.py: the search engineer's corpus, built by its own code

    started = time.perf_counter()
    built = search_bench.build(messages, seed)
    return {"seconds": time.perf_counter() - started, "words": built["layout"]["vocabulary"]}


def member_client(slug: str):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from sessions_app.models import Membership, Tenant

    user, _ = get_user_model().objects.get_or_create(username=f"bench-{slug}")
    Membership.objects.get_or_create(tenant=Tenant.objects.get(slug=slug), user=user, defaults={"role": "admin"})
    client = Client()
    client.force_login(user)
    return client


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def time_requests(client, urls: list[str], repeat: int, headers: dict | None = None) -> dict:
    headers = headers or {}
    for url in urls[: min(len(urls), 5)]:
        assert client.get(url, **headers).status_code == 200, url  # warm-up, and a check the page works
    samples, cpu = [], []
    for i in range(repeat):
        url = urls[i % len(urls)]
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(url, **headers)
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return _summary(samples, cpu)


def _summary(samples: list[float], cpu: list[float]) -> dict:
    # Wall time is what a reader waits; on a shared machine it mostly measures the wait for a core. The Django
    # process's CPU time (the database's own time not included) shows the work itself, far less load-dependent.
    return {
        "requests": len(samples),
        "median_ms": round(statistics.median(samples), 1),
        "p95_ms": round(percentile(samples, 0.95), 1),
        "max_ms": round(max(samples), 1),
        "cpu_median_ms": round(statistics.median(cpu), 1),
        "cpu_p95_ms": round(percentile(cpu, 0.95), 1),
    }


def time_sequence(client, requests: list[tuple[str, dict]], repeat: int) -> dict:
    """Server time of requests made one after another (a page and the fragment it loads), summed per round."""
    for url, headers in requests:
        assert client.get(url, **headers).status_code == 200, url
    samples, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        for url, headers in requests:
            assert client.get(url, **headers).status_code == 200, url
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return _summary(samples, cpu)


def deep_cursor(position: int) -> str:
    from sessions_app.core.paging import encode_key
    from sessions_app.models import Conversation

    row = (
        Conversation.objects.filter(tenant__slug=LIST_TENANT)
        .order_by("-last_activity_at", "-pk")
        .values_list("last_activity_at", "pk")[position]
    )
    return encode_key(row[0], row[1])


def list_phase(args) -> dict:
    from sessions_app.models import Conversation, Tenant
    from sessions_app.transcripts import reading as transcript_reading

    report: dict = {"build": {}, "results": {}}
    if not Tenant.objects.filter(slug=LIST_TENANT).exists():
        print(f"building the list corpus: {args.conversations} conversations …", flush=True)
        report["build"]["list_corpus_s"] = round(build_list_corpus(args.conversations, args.seed), 1)
    if not Conversation.objects.filter(external_id=TRANSCRIPT_ID).exists():
        print(f"storing a {args.transcript}-message conversation through ingestion …", flush=True)
        report["build"]["transcript_ingest_s"] = round(build_transcript(args.transcript), 1)
    if not Conversation.objects.filter(external_id=TIMELINE_ID).exists():
        print(f"storing a conversation of {args.timeline_runs} runs through ingestion …", flush=True)
        report["build"]["timeline_ingest_s"] = round(build_timeline_conversation(args.timeline_runs), 1)

    listed = Conversation.objects.filter(tenant__slug=LIST_TENANT).count()
    report["conversations_in_tenant"] = listed
    client = member_client(LIST_TENANT)
    n = args.requests
    cursor = deep_cursor(min(50_000, listed - 100))
    list_cases = {
        "list, first page": ["/conversations/"],
        "list, page after 50,000 rows (keyset)": [f"/conversations/?cursor={cursor}"],
        "list, next rows over HTMX (infinite scroll)": [f"/conversations/?cursor={cursor}"],
        "list, verdict = INTERRUPTED TOOL": ["/conversations/?verdict=INTERRUPTED+TOOL"],
        "list, run state = interrupted": ["/conversations/?state=interrupted"],
        "list, has repairs": ["/conversations/?has_repairs=on"],
        "list, agent = deploy_agent": ["/conversations/?agent=deploy_agent"],
        "list, one month": ["/conversations/?since=2026-03-01&until=2026-03-31"],
        "list, sorted by size": ["/conversations/?sort=largest"],
        # Issue 26: the triage columns, sorted and ranged on the columns kept at ingest.
        "list, worst verdict first": ["/conversations/?sort=worst"],
        "list, highest cost first": ["/conversations/?sort=cost"],
        "list, most tokens first": ["/conversations/?sort=tokens"],
        "list, longest duration first": ["/conversations/?sort=duration"],
        "list, cost $0.50 to $2, most tool calls first": ["/conversations/?cost_min=0.5&cost_max=2&sort=tool_calls"],
        "list, 10+ tool calls and 20+ turns range": ["/conversations/?tool_calls_min=10&turns_min=15"],
        # Runs start over the year before 2026-11-01; the overview's cost follows the runs in its range.
        "overview, 30 days": ["/overview/?since=2026-10-02&until=2026-10-31"],
        "overview, a year (366 days)": ["/overview/?since=2025-11-01&until=2026-11-01"],
    }
    for name, urls in list_cases.items():
        if args.only and args.only not in name:
            continue
        headers = {"HTTP_HX_REQUEST": "true"} if "HTMX" in name else {}
        report["results"][name] = time_requests(client, urls, n, headers)
        print(f"  {name}: {report['results'][name]}", flush=True)

    transcript = Conversation.objects.get(external_id=TRANSCRIPT_ID)
    report["transcript_messages"] = transcript.message_count
    for name, window in (
        ("transcript, first window (1,000 messages)", 1000),
        ("transcript, all 2,000 messages on one page", 2000),
    ):
        if args.only and args.only not in name:
            continue
        transcript_reading.WINDOW = window
        report["results"][name] = time_requests(client, [f"/c/{transcript.external_id}/"], max(10, n // 2))
        print(f"  {name}: {report['results'][name]}", flush=True)
    transcript_reading.WINDOW = 1000
    timeline = Conversation.objects.get(external_id=TIMELINE_ID)
    report["timeline_runs"] = timeline.runs.count()
    runs = report["timeline_runs"]
    page_url, fragment_url = f"/c/{timeline.external_id}/", f"/c/{timeline.external_id}/timeline"
    htmx = {"HTTP_HX_REQUEST": "true"}
    cases = {
        # The page a browser opens: the transcript, with the timeline loading right after it as a fragment.
        f"conversation page, {runs} runs (its timeline loads after)": ([page_url], {}),
        f"its timeline fragment, {runs} runs": ([fragment_url], htmx),
        # Without JavaScript (or from a link into the timeline) the page renders the timeline in place.
        f"conversation with its timeline in place, {runs} runs (?timeline=inline)": (
            [page_url + "?timeline=inline"],
            {},
        ),
        f"conversation with its timeline in place, {runs} runs, every run shown (?runs=all)": (
            [page_url + "?runs=all"],
            {},
        ),
    }
    for name, (urls, headers) in cases.items():
        if args.only and args.only not in name:
            continue
        report["results"][name] = time_requests(client, urls, n, headers)
        print(f"  {name}: {report['results'][name]}", flush=True)
    name = f"page then its timeline fragment, {runs} runs (both requests, server time summed)"
    if not args.only or args.only in name:
        report["results"][name] = time_sequence(client, [(page_url, {}), (fragment_url, htmx)], n)
        print(f"  {name}: {report['results'][name]}", flush=True)
    return report


def search_phase(args) -> dict:
    from urllib.parse import quote

    from search_app.models import SearchDocument
    from sessions_app.models import Tenant

    report: dict = {"build": {}, "results": {}}
    if not Tenant.objects.filter(slug="bench-0").exists():
        print(f"building the search corpus: {args.search_messages} messages (bench/search.py) …", flush=True)
        report["build"]["search_corpus_s"] = round(build_search_corpus(args.search_messages, args.seed)["seconds"], 1)
    report["search_messages_total"] = SearchDocument.objects.count()
    report["search_messages_in_tenant"] = SearchDocument.objects.filter(tenant__slug="bench-0").count()
    client = member_client("bench-0")
    rng = random.Random(args.seed)
    sample = list(
        SearchDocument.objects.filter(tenant__slug="bench-0").order_by("?").values_list("terms", flat=True)[:400]
    )
    counts: dict[str, int] = {}
    for text in sample:
        for word in text.split(" "):
            counts[word] = counts.get(word, 0) + 1
    common = sorted(counts, key=counts.get, reverse=True)[:40]
    rare = sorted(w for w, c in counts.items() if c == 1 and len(w) >= 5)[:60]
    hx = {"HTTP_HX_REQUEST": "true"}

    def typed(words: list[str], cut: int | None) -> list[str]:
        return [f"/search/?q={quote(w[:cut] if cut else w)}" for w in words]

    cases = {
        "search as you type, 4 letters of a rare word (prefix)": typed(rng.sample(rare, min(30, len(rare))), 4),
        "search as you type, rare word complete": typed(rare, None),
        "search as you type, common word complete": typed(common, None),
        "search as you type, 4 letters of a common word (prefix)": typed(common[:20], 4),
        "search as you type, common word then a rare one": [
            f"/search/?q={quote(a + ' ' + b)}" for a, b in zip(common[:20], rare[:20], strict=False)
        ],
    }
    for name, urls in cases.items():
        report["results"][name] = time_requests(client, urls, args.requests, hx)
        print(f"  {name}: {report['results'][name]}", flush=True)
    # The same complete-word queries through search_app.service.run_search alone: what the page adds on top.
    from urllib.parse import unquote

    from search_app.service import run_search

    tenant = Tenant.objects.get(slug="bench-0")
    for name in ("search as you type, rare word complete", "search as you type, common word complete"):
        queries = [unquote(url.split("q=", 1)[1]) for url in cases[name]]
        samples = []
        for i in range(args.requests):
            started = time.perf_counter()
            run_search(tenant=tenant, query=queries[i % len(queries)], scope="tenant")
            samples.append((time.perf_counter() - started) * 1000)
        core = name.replace("search as you type", "run_search alone")
        report["results"][core] = {
            "requests": args.requests,
            "median_ms": round(statistics.median(samples), 1),
            "p95_ms": round(percentile(samples, 0.95), 1),
            "max_ms": round(max(samples), 1),
        }
        print(f"  {core}: {report['results'][core]}", flush=True)
    return report


SERVED_TENANT = "pages-served"
SERVED_PORT = 8126
SERVED_MODELS = ("gpt-5-mini", "claude-sonnet-4-5", "in-house-llm")  # the last has no price: "no price"


def served_payloads(count: int, seed: int, today) -> "Iterator[dict]":
    """`count` conversations of one to three runs (prompt, tool call, its result, answer; usage and model on
    every response), started over the 60 days before `today`: snapshot bodies as POST /api/v1/snapshots takes."""
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

    rng = random.Random(seed)
    end = datetime(today.year, today.month, today.day, tzinfo=UTC)
    for c in range(count):
        conversation_id = f"served-{c:05d}"
        at = end - timedelta(minutes=rng.randint(60, 60 * 24 * 60))
        agent = rng.choice(("support_agent", "billing_agent", "deploy_agent", "triage"))
        for r in range(rng.choice((1, 1, 2, 3))):
            model = rng.choices(SERVED_MODELS, weights=(70, 25, 5))[0]
            usage = RequestUsage(input_tokens=rng.randint(200, 4000), output_tokens=rng.randint(20, 400))
            call_id = f"{conversation_id}-{r}-call"
            order = f"ORD-{rng.randint(1, 99999):05d}"
            messages = [
                ModelRequest(
                    parts=[UserPromptPart(f"Where is my refund for order {order}? It has been a week.", timestamp=at)]
                ),
                ModelResponse(
                    parts=[ToolCallPart("lookup_order", {"order": order}, call_id)],
                    usage=usage,
                    model_name=model,
                    timestamp=at + timedelta(seconds=rng.randint(1, 9)),
                ),
                ModelRequest(
                    parts=[
                        ToolReturnPart(
                            "lookup_order", f"{order}: refunded", call_id, timestamp=at + timedelta(seconds=12)
                        )
                    ]
                ),
                ModelResponse(
                    parts=[TextPart(f"Your refund for {order} was sent.")],
                    usage=usage,
                    model_name=model,
                    timestamp=at + timedelta(seconds=12 + rng.randint(1, 20)),
                ),
            ]
            state = rng.choices(("complete", "interrupted"), weights=(94, 6))[0]
            yield {
                "conversation_id": conversation_id,
                "run_id": f"{conversation_id}-run-{r}",
                "agent": agent,
                "state": state,
                "started_at": at.isoformat(),
                "messages": json.loads(
                    ModelMessagesTypeAdapter.dump_json(messages[:3] if state == "interrupted" else messages)
                ),
            }
            at += timedelta(minutes=rng.randint(5, 600))


def served_phase(args) -> dict:
    """The list through the production server: the corpus imported by `manage.py import_sessions` (the user's
    door), served by `manage.py serve` (gunicorn) on port 8126, timed over HTTP with a signed-in session."""
    import subprocess
    import urllib.request
    from http.cookiejar import CookieJar  # noqa: F401  (a plain Cookie header is enough)

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from sessions_app.models import Conversation, Membership, Tenant

    report: dict = {"build": {}, "results": {}, "load_average_at_start": os.getloadavg()}
    manage = [sys.executable, str(ROOT / "manage.py")]
    env = {**os.environ}
    if not Tenant.objects.filter(slug=SERVED_TENANT).exists():
        subprocess.run([*manage, "create_tenant", SERVED_TENANT, "--name", "Served list"], env=env, check=True)
    have = Conversation.objects.filter(tenant__slug=SERVED_TENANT).count()
    if have < args.conversations:
        path = Path(tempfile.gettempdir()) / f"pages-served-{args.conversations}.jsonl"
        with path.open("w") as out:
            for payload in served_payloads(args.conversations, args.seed, datetime.now(UTC).date()):
                out.write(json.dumps(payload) + "\n")
        print(f"importing {args.conversations} conversations with import_sessions …", flush=True)
        started = time.perf_counter()
        subprocess.run([*manage, "import_sessions", "--tenant", SERVED_TENANT, str(path)], env=env, check=True)
        report["build"]["import_sessions_s"] = round(time.perf_counter() - started, 1)
        report["build"]["load_average_after_import"] = os.getloadavg()
    listed = Conversation.objects.filter(tenant__slug=SERVED_TENANT).count()
    report["conversations_in_tenant"] = listed

    user, _ = get_user_model().objects.get_or_create(username=f"bench-{SERVED_TENANT}")
    Membership.objects.get_or_create(
        tenant=Tenant.objects.get(slug=SERVED_TENANT), user=user, defaults={"role": "admin"}
    )
    client = Client()
    client.force_login(user)  # a session row in the served database; its cookie signs in the HTTP requests
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"

    server = subprocess.Popen(
        [*manage, "serve", "--bind", f"127.0.0.1:{SERVED_PORT}", "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{SERVED_PORT}"

    def get(url: str) -> float:
        request = urllib.request.Request(base + url, headers={"Cookie": cookie})  # noqa: S310  # http://127.0.0.1 only
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310  # our own local server
            response.read()
            assert response.status == 200, (url, response.status)
        return (time.perf_counter() - started) * 1000

    try:
        for _ in range(120):
            try:
                get("/healthz")
                break
            except Exception:  # not up yet
                time.sleep(0.5)
        cases = {
            "list, first page (most recent activity)": "/conversations/",
            "list, worst verdict first": "/conversations/?sort=worst",
            "list, highest cost first": "/conversations/?sort=cost",
            "list, most tokens first": "/conversations/?sort=tokens",
            "list, longest duration first": "/conversations/?sort=duration",
            "list, agent = billing_agent": "/conversations/?agent=billing_agent",
            "list, verdict = INTERRUPTED TOOL": "/conversations/?verdict=INTERRUPTED+TOOL",
            "list, cost $0.001 to $1, most tool calls first": (
                "/conversations/?cost_min=0.001&cost_max=1&sort=tool_calls"
            ),
            "overview, last 30 days": "/overview/",
        }
        for name, url in cases.items():
            if args.only and args.only not in name:
                continue
            for _ in range(3):
                get(url)  # warm-up, and a check the page answers 200
            load = os.getloadavg()
            samples = [get(url) for _ in range(args.requests)]
            report["results"][name] = {
                "median_ms": round(statistics.median(samples), 1),
                "p95_ms": round(percentile(samples, 0.95), 1),
                "requests": len(samples),
                "load_average": [round(x, 2) for x in load],
            }
            print(f"  {name}: {report['results'][name]}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    report["load_average_at_end"] = os.getloadavg()
    return report


def main() -> None:
    import subprocess

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="postgres://root@127.0.0.1:5432/sd_bench_pages")
    parser.add_argument("--search-database", default="postgres://root@127.0.0.1:5432/sd_bench_pages_search")
    parser.add_argument("--phase", choices=("all", "list", "search", "served"), default="all")
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--transcript", type=int, default=2000)
    parser.add_argument("--timeline-runs", type=int, default=200)
    parser.add_argument("--search-messages", type=int, default=1_000_000, help="0 skips the search phase")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default="", help="time only the cases whose name contains this text")
    args = parser.parse_args()
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)

    if args.phase != "all":
        configure(args.search_database if args.phase == "search" else args.database)
        report = {"list": list_phase, "search": search_phase, "served": served_phase}[args.phase](args)
        (results / f"pages-{args.phase}.json").write_text(json.dumps(report, indent=2))
        return

    phases = ["list"] + (["search"] if args.search_messages else [])
    merged: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "database": "PostgreSQL (local)",
        "load_average_at_start": os.getloadavg(),
        "build": {},
        "results": {},
    }
    for phase in phases:
        subprocess.run([sys.executable, __file__, "--phase", phase, *sys.argv[1:]], check=True)
        part = json.loads((results / f"pages-{phase}.json").read_text())
        merged["build"].update(part.pop("build"))
        merged["results"].update(part.pop("results"))
        merged.update(part)
    merged["load_average_at_end"] = os.getloadavg()
    (results / "pages.json").write_text(json.dumps(merged, indent=2))
    print("\n| page | median ms | p95 ms |\n| --- | ---: | ---: |")
    for name, result in merged["results"].items():
        print(f"| {name} | {result['median_ms']} | {result['p95_ms']} |")


if __name__ == "__main__":
    main()
