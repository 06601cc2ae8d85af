"""PostgreSQL's catalog: every tenant-owned key carries the tenant, the largest tables are partitioned by it, and
the hot paths (ingest by HTTP, OTLP and import, recovery, list, transcript, search in every scope, export, audit,
replay) read one partition per query; on a Citus coordinator (`make test-citus`) each of their queries is routed
to one shard (docs/SCALING.md)."""

import io
import json
import re

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.tenancy.citus import placed_tables
from tests.agents import traced_weather_runs, weather_messages
from tests.citus_mode import CITUS_TESTS
from tests.sessions_app.dashboard.conftest import World, build_world, client_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions and their catalog are PostgreSQL's"),
]

# Shared by every tenant, or found before the tenant is known (by a secret's hash, by the signed-in user): Citus
# reference tables.
REFERENCE_TABLES = {"sessions_app_tenant", "sessions_app_apikey", "sessions_app_invitation", "sessions_app_membership"}
PARTITIONED = {
    "sessions_app_storedmessage",
    "sessions_app_snapshotmessage",
    "sessions_app_transcriptentry",
    "search_app_searchdocument",
    "search_app_postingblock",
}
PARTITION_NAME = re.compile(r"^(?P<table>.+)_p\d\d$")


def tenant_owned_tables(cursor) -> set[str]:
    cursor.execute(
        """SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition"""
    )
    return {name for (name,) in cursor.fetchall()} - REFERENCE_TABLES


def constraints(cursor) -> list[tuple[str, str, str, str, list[str], list[str]]]:
    """(table, name, kind, referenced table, columns, referenced columns) of every key and foreign key declared on
    a table (not the copies PostgreSQL makes on each partition)."""
    cursor.execute(
        """SELECT c.conrelid::regclass::text, c.conname, c.contype, c.confrelid::regclass::text,
            ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, o)
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o),
            ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, o)
                  JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o)
        FROM pg_constraint c WHERE c.contype IN ('p', 'u', 'f') AND c.conparentid = 0"""
    )
    return cursor.fetchall()


def key_violations(cursor) -> list[str]:
    """Primary keys, unique keys and unique indexes without tenant_id, and foreign keys between tenant-owned
    tables that do not match tenant_id to tenant_id."""
    owned = tenant_owned_tables(cursor)
    violations = []
    for table, name, kind, target, columns, target_columns in constraints(cursor):
        if table not in owned:
            continue
        if kind in "pu" and "tenant_id" not in columns:
            violations.append(f"{table}.{name}: key {columns} without tenant_id")
        if kind == "f" and target in owned:
            pairs = set(zip(columns, target_columns, strict=True))
            if ("tenant_id", "tenant_id") not in pairs:
                violations.append(f"{table}.{name}: foreign key {columns} -> {target} {target_columns} crosses tenants")
    cursor.execute(
        """SELECT t.relname, i.relname FROM pg_index x
        JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indisunique AND NOT t.relispartition
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid)
        AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = x.indrelid AND a.attname = 'tenant_id'
                        AND a.attnum = ANY(x.indkey))"""
    )
    violations += [
        f"{table}.{index}: unique index without tenant_id" for table, index in cursor.fetchall() if table in owned
    ]
    return violations


def test_every_key_of_a_tenant_owned_table_carries_the_tenant():
    with connection.cursor() as cursor:
        owned = tenant_owned_tables(cursor)
        assert {"sessions_app_conversation", "sessions_app_run", "search_app_conversationindex"} <= owned
        assert key_violations(cursor) == []


def test_every_relation_between_tenant_owned_tables_is_a_tenant_qualified_key():
    """Every ForeignKey of the models between two tenant-owned tables is a (tenant_id, x_id) key in the database,
    but those into a partitioned table: PostgreSQL 15 would lock every partition per checked row (search_app
    migration 0006 has the measurements); their rows are written with what they point to. And a snapshot's
    message references, a row per message per snapshot, whose checks were most of a long snapshot's write
    (sessions_app migration 0024)."""
    with connection.cursor() as cursor:
        owned = tenant_owned_tables(cursor)
        keys = {
            (table, target, tuple(columns)) for table, _, kind, target, columns, _ in constraints(cursor) if kind == "f"
        }
    expected, unkeyed = set(), set()
    for model in [*apps.get_app_config("sessions_app").get_models(), *apps.get_app_config("search_app").get_models()]:
        for field in model._meta.concrete_fields:
            target = field.related_model._meta.db_table if field.is_relation else None
            if target in owned and model._meta.db_table in owned and field.column != "tenant_id":
                relation = (model._meta.db_table, target, ("tenant_id", field.column))
                unchecked = target in PARTITIONED or model._meta.db_table == "sessions_app_snapshotmessage"
                (unkeyed if unchecked else expected).add(relation)
    assert len(expected) == 21  # 12, the 8 of the review tables (issue 27) and the runtime spans' run (issue 28)
    assert expected <= keys
    assert unkeyed == {
        ("sessions_app_snapshotmessage", "sessions_app_storedmessage", ("tenant_id", "message_id")),
        ("sessions_app_snapshotmessage", "sessions_app_snapshot", ("tenant_id", "snapshot_id")),
        ("sessions_app_transcriptentry", "sessions_app_storedmessage", ("tenant_id", "message_id")),
        ("search_app_searchdocument", "sessions_app_transcriptentry", ("tenant_id", "entry_id")),
    }
    assert not unkeyed & keys


def test_the_check_finds_a_key_without_the_tenant():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE sessions_app_careless (id bigint PRIMARY KEY, tenant_id bigint, run_id bigint)")
        cursor.execute(  # the tenant's column matched to the run's id: a key that could point into another tenant
            "ALTER TABLE sessions_app_careless ADD CONSTRAINT careless_run_fk FOREIGN KEY (run_id, tenant_id) "
            "REFERENCES sessions_app_run (tenant_id, id)"
        )
        cursor.execute("CREATE UNIQUE INDEX careless_run ON sessions_app_careless (run_id)")
        try:
            found = key_violations(cursor)
        finally:
            cursor.execute("DROP TABLE sessions_app_careless")
    assert sorted(found) == [
        "sessions_app_careless.careless_run: unique index without tenant_id",
        "sessions_app_careless.careless_run_fk: foreign key ['run_id', 'tenant_id'] -> sessions_app_run "
        "['tenant_id', 'id'] crosses tenants",
        "sessions_app_careless.sessions_app_careless_pkey: key ['id'] without tenant_id",
    ]


def test_the_largest_tables_are_hash_partitioned_by_tenant():
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.relname, pg_get_partkeydef(c.oid), count(p.inhrelid)
            FROM pg_partitioned_table pt JOIN pg_class c ON c.oid = pt.partrelid
            LEFT JOIN pg_inherits p ON p.inhparent = c.oid GROUP BY c.relname, c.oid"""
        )
        partitioned = {name: (key, count) for name, key, count in cursor.fetchall()}
    assert set(partitioned) == PARTITIONED
    assert {key for key, _ in partitioned.values()} == {"HASH (tenant_id)"}
    assert {count for _, count in partitioned.values()} == {16}


def _scans(plan: dict) -> list[dict]:
    nodes, stack = [], [plan]
    while stack:
        node = stack.pop()
        if "Relation Name" in node and "Scan" in node.get("Node Type", ""):
            nodes.append(node)
        stack.extend(node.get("Plans", []))
    return nodes


def _table(relation: str) -> str:
    match = PARTITION_NAME.match(relation)
    return match["table"] if match else relation


def _crossing_queries(queries: list[dict]) -> list[str]:
    """Queries that read more than one partition of a table, or a tenant-owned table without naming the tenant
    on it (a join by id alone: one partition here only by luck, and on Citus not routable to one shard)."""
    crossing = []
    with connection.cursor() as cursor:
        owned = tenant_owned_tables(cursor)
        for query in queries:
            sql = query["sql"]
            if not re.match(r"^\s*(SELECT|WITH|UPDATE|DELETE)\b", sql, re.IGNORECASE):
                continue
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
            (plan,) = cursor.fetchone()[0]
            scans = [node for node in _scans(plan["Plan"]) if _table(node["Relation Name"]) in owned]
            partitions: dict[str, set[str]] = {}
            for node in scans:
                partitions.setdefault(_table(node["Relation Name"]), set()).add(node["Relation Name"])
            spread = sorted(table for table, read in partitions.items() if len(read) > 1)
            unscoped = sorted(
                {
                    _table(node["Relation Name"])
                    for node in scans
                    if "tenant_id"
                    not in " ".join(str(node.get(k, "")) for k in ("Index Cond", "Filter", "Recheck Cond"))
                }
            )
            if spread or unscoped:
                crossing.append(f"spread over partitions {spread}, tenant not named on {unscoped}: {sql[:600]}")
    return crossing


def _otlp_export() -> bytes:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    traced_weather_runs(provider, ["Weather in Zürich?"], conversation_id="conv-otlp")
    return encode_spans(memory.get_finished_spans()).SerializeToString()


def _hot_paths(world: World, client: Client, key: str, tmp_path) -> None:
    otlp = _otlp_export()  # before the capture: the agent's run makes no query, but keep it out of the way
    history = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    for step in (1, 2):
        body = {
            "conversation_id": "conv-hot",
            "run_id": "run-hot",
            "agent": "weather",
            "step": step,
            "state": "complete",
            "messages": history[: 2 * step],
        }
        response = client.post(
            "/api/v1/snapshots",
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        assert response.status_code == 201, response.content
    reader = client_for(world.users["support"])
    for url in (
        "/conversations/",
        "/c/conv-deploy/",
        "/c/conv-hot/",
        "/search/?q=deploy",
        "/search/?q=%22deploy+the%22",
        f"/search/?q=deploy&conversation={world.deploy.external_id}",
    ):
        response = reader.get(url)
        assert response.status_code == 200, url
    typed = reader.get("/search/?q=depl", HTTP_HX_REQUEST="true")  # search as you type: the page's partial
    assert typed.status_code == 200
    for query in ("q=weather&conversation_id=conv-hot", "q=weather&scope=run&run_id=run-hot", "q=weather&scope=tenant"):
        response = client.get(f"/api/v1/search?{query}", HTTP_AUTHORIZATION=f"Bearer {key}")
        assert response.status_code == 200, response.content
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    response = client.post("/v1/traces", otlp, content_type="application/x-protobuf", **auth)
    assert response.status_code == 200, response.content
    imported = tmp_path / "import.jsonl"
    line = {"conversation_id": "conv-import", "run_id": "run-import", "agent": "w", "state": "complete"}
    imported.write_text(json.dumps({**line, "messages": history}) + "\n")
    call_command("import_sessions", "--tenant", world.acme.slug, str(imported), stdout=io.StringIO())
    for url in ("/api/v1/runs/run-hot/audit", "/api/v1/conversations/conv-hot/replay"):
        response = client.get(url, **auth)
        assert response.status_code in (200, 409), (url, response.content)
    contract = {"kind": "dynamic"}  # an agent's prompt contract: its runs re-audited
    response = client.post("/api/v1/agents/weather/prompt-contract", json.dumps(contract), "application/json", **auth)
    assert response.status_code == 200, response.content
    admin = client_for(world.users["admin"])
    for url in ("/r/run-hot/audit", "/audit/", "/c/conv-hot/export?format=json", "/c/conv-hot/export?format=markdown"):
        response = admin.get(url)
        assert response.status_code == 200, url
        if response.streaming:  # the export's queries run as it streams
            b"".join(response.streaming_content)


def _hot_path_queries(settings, tmp_path) -> list[dict]:
    settings.SESSIONDESK_SEARCH_FOLD_INLINE = True
    settings.SESSIONDESK_SEARCH_FOLD_AT = 1  # every commit folds: the fold's queries are on the hot path too
    world = build_world()
    key = create_api_key(world.acme, "server")[1]
    with CaptureQueriesContext(connection) as captured:
        _hot_paths(world, Client(), key, tmp_path)
    assert any("search_app_postingblock" in q["sql"] for q in captured.captured_queries)
    return captured.captured_queries


def test_the_hot_paths_read_one_partition_per_query(settings, tmp_path):
    assert _crossing_queries(_hot_path_queries(settings, tmp_path)) == []


def _distributed_job(plan: dict) -> dict | None:
    """The Citus job of a plan's distributed scan, wherever it sits (under a ModifyTable, a Limit, ...)."""
    stack = [plan]
    while stack:
        node = stack.pop()
        if "Distributed Query" in node:
            return node["Distributed Query"]["Job"]
        stack.extend(node.get("Plans", []))
    return None


def _fanned_out_queries(queries: list[dict]) -> list[str]:
    """Queries on a distributed table that Citus does not route to one shard: more than one task, or a plan of
    several jobs (a repartition, a subplan) rather than the router planner's single one."""
    fanned = []
    with connection.cursor() as cursor:
        distributed = {t for t, kind in placed_tables(cursor).items() if kind == "distributed"}
        for query in queries:
            sql = query["sql"]
            # Not INSERTs: the bulk INSERT ... SELECT FROM UNNEST of ingest is planned by Citus as a coordinator
            # insert-select (docs/SCALING.md), not by the router planner.
            if not re.match(r"^\s*(SELECT|WITH|UPDATE|DELETE)\b", sql, re.IGNORECASE):
                continue
            if not any(re.search(rf"\b{table}\b", sql) for table in distributed):
                continue
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
            (plan,) = cursor.fetchone()[0]
            job = _distributed_job(plan["Plan"])
            if job is None or job.get("Task Count") != 1 or "Subplans" in plan["Plan"].get("Distributed Query", {}):
                tasks = None if job is None else job.get("Task Count")
                fanned.append(f"{tasks} tasks: {sql[:600]}")
    return fanned


@pytest.mark.skipif(not CITUS_TESTS, reason="needs a Citus coordinator (make test-citus)")
def test_on_citus_every_hot_path_query_is_routed_to_one_shard(settings, tmp_path):
    assert _fanned_out_queries(_hot_path_queries(settings, tmp_path)) == []


@pytest.mark.skipif(not CITUS_TESTS, reason="needs a Citus coordinator (make test-citus)")
def test_on_citus_every_tenant_owned_table_is_distributed_and_every_shared_one_a_reference_table():
    """Found from the catalog, not a list: a tenant-owned table a new migration adds fails here by name until
    distribute_tenants (which finds it the same way) has distributed it."""
    with connection.cursor() as cursor:
        owned = tenant_owned_tables(cursor)
        placed = placed_tables(cursor)
        cursor.execute(
            "SELECT colocationid, count(*) FROM pg_dist_partition WHERE partmethod = 'h' GROUP BY colocationid"
        )
        groups = cursor.fetchall()
    assert sorted(t for t in owned if placed.get(t) != "distributed") == []
    assert sorted(t for t in REFERENCE_TABLES if placed.get(t) != "reference") == []
    assert len(groups) == 1  # one colocation group: a tenant's rows of every table on one node
