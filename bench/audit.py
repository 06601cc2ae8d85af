"""Cost of one replay audit, the work ingestion adds to every stored snapshot.

    .venv/bin/python bench/audit.py [--sizes 20 200 2000] [--trials 30] [--database-url postgres://root@127.0.0.1:5432/sd_bench_audit]

Histories come from a real pydantic-ai Agent driven by FunctionModel that calls a tool on every step (so the
tool-pairing gate has real work). Two numbers per size: the pure gates alone (`run_gates` over the stored JSON)
and `audit_run` end to end on PostgreSQL (load the latest snapshot through tenancy, gates, verdict upsert,
event check). Median and p95 over the trials.
"""

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def history(tool_calls: int, conversation_id: str):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

    def model(messages, info):
        step = len(messages) // 2
        if step >= tool_calls:
            return ModelResponse(parts=[TextPart("All lookups done.")])
        return ModelResponse(
            parts=[ToolCallPart("lookup", {"order": f"ORD-{step:05d}"}, tool_call_id=f"c{step}")]
        )

    agent = Agent(FunctionModel(model), system_prompt="You look orders up.", name="bench")

    @agent.tool_plain
    def lookup(order: str) -> str:
        return f"{order}: shipped, 3 parcels, signed for by the front desk"

    limits = UsageLimits(request_limit=tool_calls + 5)
    return agent.run_sync(
        "Look up every order", conversation_id=conversation_id, usage_limits=limits
    ).all_messages()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def setup(database_url: str) -> None:
    import psycopg

    admin = database_url.rsplit("/", 1)[0] + "/postgres"
    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    import tests.testenv  # noqa: F401  (a SECRET_KEY and plain-HTTP hosts, as the suite runs; DEBUG stays off)

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10, 100, 1000], help="tool calls per history"
    )
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--database-url", default="postgres://root@127.0.0.1:5432/sd_bench_audit")
    args = parser.parse_args()
    setup(args.database_url)

    from sessions_app.audit import gates, service
    from sessions_app.ingest.payloads import SnapshotPayload
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import Run, Tenant

    tenant = Tenant.objects.create(slug="bench", name="Bench")
    machine = f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    print(f"{machine}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {args.trials} trials")
    print("messages | run_gates median / p95 ms | audit_run (PostgreSQL) median / p95 ms")
    for size in args.sizes:
        conversation_id = f"bench-conv-{size}"
        messages = history(size, conversation_id)
        ctx = gates.AuditContext(
            run_id="r",
            conversation_id=conversation_id,
            now=datetime.now(UTC),
            stored_messages=gates.stored_form(messages),
            owned_conversation_ids=frozenset({conversation_id}),
        )
        pure = []
        for _ in range(args.trials):
            started = time.perf_counter()
            gates.run_gates(ctx)
            pure.append((time.perf_counter() - started) * 1000)
        run_id = f"bench-{size}"
        payload = SnapshotPayload(
            conversation_id=conversation_id, run_id=run_id, agent="bench", state="complete", messages=messages
        )
        ingest_snapshots(tenant, [payload], source="server", via="api")
        run = Run.objects.select_related("conversation", "tenant").get(tenant=tenant, run_id=run_id)
        full = []
        for _ in range(args.trials):
            started = time.perf_counter()
            service.audit_run(run)
            full.append((time.perf_counter() - started) * 1000)
        verdict = service.audit_report(run).verdict
        print(
            f"{len(messages):>8} | {statistics.median(pure):8.2f} / {percentile(pure, 0.95):8.2f} | "
            f"{statistics.median(full):8.2f} / {percentile(full, 0.95):8.2f} | {verdict}"
        )


if __name__ == "__main__":
    main()
