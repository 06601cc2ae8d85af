"""import_sessions --harness-postgres: a real agent's harness PostgresStepStore, imported what is new at a time.

The store lives in a PostgreSQL database of its own (HARNESS_POSTGRES_URL, default
postgres://root@127.0.0.1:5432/sessiondesk_harness), whatever database Django's tests use; without a reachable
server the tests skip saying so.
"""

import asyncio
import json
import os
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest import harness_postgres
from sessions_app.models import Conversation, HarnessImportCursor, Run, ToolEffect
from sessions_app.transcripts.export import export_conversation
from tests.agents import weather_agent
from tests.ensure_postgres import main as ensure_postgres
from tests.rowcounts import row_counts

asyncpg = pytest.importorskip("asyncpg")

HARNESS_URL = os.environ.get("HARNESS_POSTGRES_URL", "postgres://root@127.0.0.1:5432/sessiondesk_harness")
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(ensure_postgres(HARNESS_URL) != 0, reason=f"no PostgreSQL at {HARNESS_URL}"),
]


async def _record(table: str, prompts: list[str], history: list, conversation_id: str) -> list:
    """Run the weather agent with the harness's StepPersistence writing into a PostgresStepStore."""
    from pydantic_ai_harness.step_persistence import PostgresStepStore, StepPersistence

    pool = await asyncpg.create_pool(HARNESS_URL, min_size=1, max_size=4)
    try:
        store = PostgresStepStore(pool, table=table)
        agent = weather_agent()
        for prompt in prompts:
            persistence = StepPersistence(store=store, agent_name="weather")
            result = await agent.run(
                prompt, message_history=history or None, conversation_id=conversation_id, capabilities=[persistence]
            )
            history = result.all_messages()
    finally:
        await pool.close()
    return history


def record(table, prompts, history=(), conversation_id="pg-conv") -> list:
    return asyncio.run(_record(table, prompts, list(history), conversation_id))


@pytest.fixture
def table():
    name = f"t{uuid.uuid4().hex[:16]}"
    yield name

    async def drop():
        connection = await asyncpg.connect(HARNESS_URL)
        try:
            for suffix in ("runs", "events", "snapshots", "messages", "snapshot_keys", "tool_effects", "media"):
                await connection.execute(f"DROP TABLE IF EXISTS {name}_{suffix}")
        finally:
            await connection.close()

    asyncio.run(drop())


def run_import(*extra: str) -> str:
    out = StringIO()
    call_command("import_sessions", "--tenant", "acme", "--harness-postgres", HARNESS_URL, *extra, stdout=out)
    return out.getvalue()


def transcript(tenant, conversation_id="pg-conv") -> list:
    conversation = Conversation.objects.get(tenant=tenant, external_id=conversation_id)
    return json.loads("".join(export_conversation(conversation, "json")))


def test_it_imports_the_store_then_only_what_is_new(tenant, table):
    history = record(table, ["Weather in Zürich?", "And tomorrow?"])
    output = run_import("--table", table)
    assert "2 run(s) with new snapshots" in output
    assert transcript(tenant) == ModelMessagesTypeAdapter.dump_python(history, mode="json")
    assert ToolEffect.objects.filter(tenant=tenant).count() == 2
    cursor = HarnessImportCursor.objects.get(tenant=tenant)
    assert cursor.store == harness_postgres.HarnessStore(HARNESS_URL, table).label and cursor.last_seq > 0

    before = row_counts()
    output = run_import("--table", table)
    assert "0 run(s) with new snapshots, 0 new snapshot(s)" in output
    assert row_counts() == before

    history = record(table, ["And the day after?"], history)
    output = run_import("--table", table)
    assert "1 run(s) with new snapshots" in output
    assert Run.objects.filter(tenant=tenant).count() == 3
    assert transcript(tenant) == ModelMessagesTypeAdapter.dump_python(history, mode="json")


def test_follow_keeps_importing_what_arrives_between_reads(tenant, table, monkeypatch):
    record(table, ["Weather in Zürich?"])
    later: list = []

    def sleep(seconds: float) -> None:  # between two reads, the agent runs again
        later.append(record(table, [f"Again, time {len(later) + 1}?"], conversation_id=f"pg-later-{len(later)}"))

    monkeypatch.setattr("sessions_app.management.commands.import_sessions.time.sleep", sleep)
    output = run_import("--table", table, "--follow", "--interval", "0", "--max-polls", "3")
    reads = [line for line in output.strip().splitlines() if not line.startswith("Search index:")]
    assert len(reads) == 3 and all("1 run(s) with new snapshots" in line for line in reads)
    assert output.count("Search index:") == 3  # each read leaves what it wrote folded
    assert Run.objects.filter(tenant=tenant).count() == 3
    assert transcript(tenant, "pg-later-1") == ModelMessagesTypeAdapter.dump_python(later[1], mode="json")


def test_a_missing_store_is_named_and_creates_nothing(tenant, table):
    before = row_counts()
    with pytest.raises(CommandError, match="not a pydantic-ai-harness PostgresStepStore"):
        run_import("--table", table)
    with pytest.raises(CommandError, match="invalid table name"):
        run_import("--table", "Not-A-Prefix")
    assert row_counts() == before

    async def tables() -> int:
        connection = await asyncpg.connect(HARNESS_URL)
        try:
            return await connection.fetchval("SELECT count(*) FROM pg_tables WHERE tablename LIKE $1", f"{table}%")
        finally:
            await connection.close()

    assert asyncio.run(tables()) == 0


def test_an_unreachable_server_is_a_clear_error(tenant):
    with pytest.raises(CommandError, match="cannot connect"):
        call_command(
            "import_sessions", "--tenant", "acme", "--harness-postgres", "postgres://nobody@127.0.0.1:1/none",
            stdout=StringIO(),
        )


def test_the_cursor_names_the_store_without_its_password():
    store = harness_postgres.HarnessStore("postgres://app:s3cret@db.example:5433/agents", "steps")
    assert store.label == "app@db.example:5433/agents steps"


def test_the_overlap_looks_again_below_the_cursor_for_rows_committed_late():
    cursor = HarnessImportCursor(last_seq=0, recent_seqs=[])
    harness_postgres._advance(cursor, [1, 2, 5])
    assert cursor.last_seq == 5 and cursor.recent_seqs == [1, 2, 5]
    seqs, runs = harness_postgres._new_seqs([(1, "a"), (2, "a"), (3, "late"), (5, "b")], cursor)
    assert runs == {"late"}


def test_under_follow_a_failed_read_is_reported_and_the_next_one_tries_again(tenant, table, monkeypatch):
    monkeypatch.setattr(
        "sessions_app.management.commands.import_sessions.time.sleep", lambda seconds: record(table, ["Late?"])
    )
    out, err = StringIO(), StringIO()
    call_command(
        "import_sessions", "--tenant", "acme", "--harness-postgres", HARNESS_URL, "--table", table,
        "--follow", "--max-polls", "2", stdout=out, stderr=err,
    )
    assert "trying again" in err.getvalue() and "missing tables" in err.getvalue()  # nothing there yet
    assert "1 run(s) with new snapshots" in out.getvalue()
    assert Run.objects.filter(tenant=tenant).count() == 1
