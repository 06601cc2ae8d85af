"""What exact counts and paging cost: the counting statement, the top-10 ranking and page 2 timed apart.

Runs on the corpus bench/search.py built (same database argument, same seed, same query classes):

    .venv/bin/python bench/search.py --database sqlite --messages 100000      # builds the corpus once
    .venv/bin/python bench/search_counts.py --database sqlite

Per class and scope (largest tenant; random conversations of it): `count_matches` alone, the ranker's top 10
alone (what `run_search` called before counts existed), and a whole second page through `run_search` with the
cursor of the first (point-in-time statistics, a window of 20). Median and p95 after one warm-up pass.
"""

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.search import configure, layout_from_database, percentile, pick_queries  # noqa: E402


def _time(label: str, calls: list[Callable[[], object]]) -> dict:
    timings = []
    for repeat in range(2):  # the first pass warms caches and is not counted
        for call in calls:
            started = time.perf_counter()
            call()
            if repeat:
                timings.append((time.perf_counter() - started) * 1000)
    result = {"median_ms": round(statistics.median(timings), 2), "p95_ms": round(percentile(timings, 0.95), 2)}
    print(f"  {label:40} median {result['median_ms']:8.2f} ms  p95 {result['p95_ms']:8.2f} ms", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    configure(args.database)

    from django.db import connection
    from django.test import override_settings

    from search_app import ranking, service
    from search_app.backends import Filters, Scope, backend_for_connection
    from search_app.query import parse_query
    from search_app.ranking.counting import count_matches
    from sessions_app.models import Conversation, Tenant

    tenant = Tenant.objects.get(slug="bench-0")
    layout = layout_from_database(args.seed)
    rng = random.Random(args.seed + 2)
    queries = pick_queries(layout, rng, args.queries)
    pks = list(Conversation.objects.filter(tenant=tenant).values_list("id", flat=True))
    conversations = [rng.choice(pks) for _ in range(args.queries)]
    backend = backend_for_connection()
    report: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "load_average_at_start": os.getloadavg(),
        "database": connection.vendor,
    }
    for scope_name in ("tenant", "conversation"):
        for name, items in queries.items():
            scopes = [
                Scope((tenant.id,)) if scope_name == "tenant" else Scope((tenant.id,), conversations[i])
                for i in range(len(items))
            ]
            parsed = [parse_query(query) for query in items]
            stats = [ranking.scope_statistics(scope) for scope in scopes]
            pairs = list(zip(parsed, scopes, stats, strict=True))
            count = _time(
                f"{scope_name} {name} count",
                [lambda p=p, s=s: count_matches(backend, s, p, Filters()) for p, s, _ in pairs],
            )
            with override_settings(SESSIONDESK_SEARCH_BLOCKS=False):  # the candidate rankers, as counted above
                rank = _time(
                    f"{scope_name} {name} top 10",
                    [lambda p=p, s=s, st=st: ranking.choose(p, s, st, Filters()).rank(10) for p, s, st in pairs],
                )
            second = {}
            if scope_name == "tenant":
                cursors = [service.run_search(tenant=tenant, query=q, scope="tenant").next_cursor for q in items]
                calls = [
                    lambda q=q, c=c: service.run_search(tenant=tenant, query=q, scope="tenant", cursor=c)
                    for q, c in zip(items, cursors, strict=True)
                    if c
                ]
                if calls:
                    second = _time(f"{scope_name} {name} page 2 (run_search)", calls)
            report[f"{scope_name}/{name}"] = {"count": count, "top_10": rank, "page_2": second}
    report["load_average_at_end"] = os.getloadavg()
    path = ROOT / "bench" / "results" / f"search-counts-{connection.vendor}.json"
    path.write_text(json.dumps(report, indent=1))
    print(f"Wrote {path}")


if __name__ == "__main__":
    main()
