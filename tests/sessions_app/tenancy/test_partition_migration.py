"""The migration to tenant keys and partitions moves a store that already holds data: every row, its tenant, its
id, and ids that keep counting from where they were (PostgreSQL; SQLite keeps its plain tables)."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")

# The store as it stood before the migration (sessions_app 0012, search_app 0005): two tenants, one conversation
# each, a snapshot of two messages and the transcript and search documents recovered from it.
OLD_STORE = """
INSERT INTO sessions_app_tenant (id, slug, name, created_at, redaction_patterns) VALUES
    (1, 'acme', 'Acme', now(), '[]'), (2, 'globex', 'Globex', now(), '[]');
INSERT INTO sessions_app_conversation (id, tenant_id, external_id, created_at, updated_at, message_count,
    snapshots_folded, owner_principal_hash) VALUES (10, 1, 'c-acme', now(), now(), 2, 1, ''),
    (20, 2, 'c-globex', now(), now(), 2, 1, '');
INSERT INTO sessions_app_run (id, tenant_id, conversation_id, run_id, agent_name, parent_run_id, source, state,
    started_at) VALUES (10, 1, 10, 'r-acme', 'a', '', 'server', 'complete', now()),
    (20, 2, 20, 'r-globex', 'a', '', 'server', 'complete', now());
INSERT INTO sessions_app_storedmessage (id, tenant_id, sha256, content_hash, data) VALUES
    (11, 1, 's11', 'h11', '{}'), (12, 1, 's12', 'h12', '{}'), (21, 2, 's21', 'h21', '{}'), (22, 2, 's22', 'h22', '{}');
INSERT INTO sessions_app_snapshot (id, tenant_id, run_id, seq, step, state, source, via, principal_hash,
    idempotency_key, digest, message_count, received_at) VALUES
    (10, 1, 10, 0, 1, 'complete', 'server', 'api', '', '', 'd', 2, now()),
    (20, 2, 20, 0, 1, 'complete', 'server', 'api', '', '', 'd', 2, now());
INSERT INTO sessions_app_snapshotmessage (id, snapshot_id, position, message_id) VALUES
    (101, 10, 0, 11), (102, 10, 1, 12), (201, 20, 0, 21), (202, 20, 1, 22);
INSERT INTO sessions_app_transcriptentry (id, tenant_id, conversation_id, position, run_id, message_id, role, text,
    recovered_from_compaction, summary_artifact, facts) VALUES
    (101, 1, 10, 0, 10, 11, 'user', 'deploy the api', false, false, '{}'),
    (102, 1, 10, 1, 10, 12, 'assistant', 'deployed', false, false, '{}'),
    (201, 2, 20, 0, 20, 21, 'user', 'deploy the web', false, false, '{}'),
    (202, 2, 20, 1, 20, 22, 'assistant', 'deployed', false, false, '{}');
INSERT INTO search_app_searchdocument (id, entry_id, tenant_id, conversation_id, run_id, agent_name, position, role,
    length, terms) VALUES (101, 101, 1, 10, 10, 'a', 0, 'user', 3, 'deploy the api'),
    (201, 201, 2, 20, 20, 'a', 0, 'user', 3, 'deploy the web');
SELECT setval(pg_get_serial_sequence('sessions_app_snapshotmessage', 'id'), 500);
"""


@pytest.fixture
def scratch_database():
    """A database of its own: the migration is run from the old schema, outside the suite's test database."""
    settings = connection.settings_dict
    server = f"postgresql://{settings['USER'] or 'root'}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}"
    name = f"sd_migration_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def migrate(url: str, *targets: str) -> None:
    environment = {**os.environ, "DATABASE_URL": url.replace("postgresql://", "postgres://", 1), "DEBUG": "true"}
    for target in targets or ("",):
        command = [sys.executable, "manage.py", "migrate", "--no-input", *target.split()]
        done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]


def test_the_migration_moves_a_store_with_data_into_tenant_partitions(scratch_database):
    migrate(scratch_database, "sessions_app 0012", "search_app 0005")
    with psycopg.connect(scratch_database, autocommit=True) as db:
        db.execute(OLD_STORE)
        before = {
            table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in (
                "sessions_app_storedmessage",
                "sessions_app_snapshotmessage",
                "sessions_app_transcriptentry",
                "search_app_searchdocument",
                "search_app_unfoldeddocument",
            )
        }
    migrate(scratch_database)
    with psycopg.connect(scratch_database, autocommit=True) as db:
        after = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in before}
        assert after == before
        refs = db.execute("SELECT id, tenant_id FROM sessions_app_snapshotmessage ORDER BY id").fetchall()
        assert refs == [(101, 1), (102, 1), (201, 2), (202, 2)]
        # Each snapshot's history, in order, on its own row (sessions_app 0025), as text since 0026.
        histories = db.execute("SELECT id, message_ids FROM sessions_app_snapshot ORDER BY id").fetchall()
        assert histories == [(10, "11,12"), (20, "21,22")]
        # Each tenant's rows sit in one partition, and the two tenants' rows are where their hash puts them.
        placed = db.execute(
            "SELECT tenant_id, count(DISTINCT tableoid) FROM sessions_app_transcriptentry GROUP BY tenant_id"
        ).fetchall()
        assert placed == [(1, 1), (2, 1)]
        # Ids go on from the old identity's value, not from the largest id left.
        (next_ref,) = db.execute(
            "INSERT INTO sessions_app_snapshotmessage (tenant_id, snapshot_id, position, message_id) "
            "VALUES (1, 10, 2, 11) RETURNING id"
        ).fetchone()
        assert next_ref == 501
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            # A tenant's transcript row in another tenant's run is refused by the keys.
            db.execute(
                "INSERT INTO sessions_app_transcriptentry (tenant_id, conversation_id, position, run_id, message_id, "
                "role, text, recovered_from_compaction, summary_artifact, facts) "
                "VALUES (1, 10, 2, 20, 11, 'user', 'x', false, false, '{}')"
            )
