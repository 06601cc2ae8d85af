"""import_sessions: harness databases, .json and .jsonl files; idempotent; a bad file changes nothing."""

import json
import sqlite3

import pytest
from django.core.management import CommandError, call_command
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.models import Conversation, Run, Snapshot, ToolEffect, TranscriptEntry
from tests.agents import record_with_harness, weather_messages
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def harness_db(tmp_path):
    from pydantic_ai_harness.step_persistence import SqliteStepStore

    path = tmp_path / "steps.db"
    run_ids = record_with_harness(
        SqliteStepStore(database=path), ["Weather in Zürich?", "And tomorrow?"], conversation_id="conv-h"
    )
    return path, run_ids


def run_import(*args):
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command("import_sessions", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_imports_a_harness_database_with_runs_snapshots_and_tool_effects(tenant, harness_db):
    path, run_ids = harness_db
    out, _ = run_import("--tenant", tenant.slug, str(path))
    assert "1 conversation(s), 2 run(s), 4 new snapshot(s)" in out
    assert list(Run.objects.order_by("started_at").values_list("run_id", flat=True)) == run_ids
    assert ToolEffect.objects.filter(status="completed").count() == 2
    conversation = Conversation.objects.get(external_id="conv-h")
    # Run two inherits run one's four messages; the transcript holds each message once.
    assert conversation.message_count == 8
    assert TranscriptEntry.objects.filter(conversation=conversation).count() == 8


def test_importing_the_same_file_twice_changes_nothing(tenant, harness_db):
    path, _ = harness_db
    run_import("--tenant", tenant.slug, str(path))
    before = row_counts()
    out, _ = run_import("--tenant", tenant.slug, str(path))
    assert "0 new snapshot(s), 4 already present, 0 new distinct message(s)" in out
    assert row_counts() == before


def test_it_leaves_the_users_harness_file_untouched(tenant, harness_db):
    path, _ = harness_db
    before = path.read_bytes()
    run_import("--tenant", tenant.slug, str(path))
    assert path.read_bytes() == before


def test_a_json_message_list_becomes_one_snapshot(tenant, tmp_path):
    messages = weather_messages(conversation_id="conv-json")
    path = tmp_path / "history.json"
    path.write_bytes(ModelMessagesTypeAdapter.dump_json(messages))
    run_import("--tenant", tenant.slug, str(path))
    assert Conversation.objects.get().external_id == "conv-json"
    assert Run.objects.get().run_id == messages[0].run_id
    assert Snapshot.objects.get().message_count == len(messages)


def test_a_jsonl_file_of_api_objects_imports_each_line(tenant, tmp_path):
    messages = weather_messages()
    lines = [
        {"conversation_id": "c-1", "run_id": f"r-{i}", "agent": "w", "state": "complete",
         "messages": ModelMessagesTypeAdapter.dump_python(messages, mode="json")}
        for i in range(3)
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out, _ = run_import("--tenant", tenant.slug, "--source", "client", str(path))
    assert "3 run(s), 3 new snapshot(s)" in out
    assert set(Run.objects.values_list("source", flat=True)) == {"client"}


def bad_files(tmp_path, harness_db_path):
    invalid_json = tmp_path / "broken.json"
    invalid_json.write_text('{"conversation_id": ')
    invalid_message = tmp_path / "invalid.jsonl"
    good = {"conversation_id": "c", "run_id": "r", "state": "complete",
            "messages": ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")}
    bad = json.loads(json.dumps(good))
    bad["run_id"] = "r2"
    bad["messages"][0]["parts"][0]["part_kind"] = "no-such-part"
    invalid_message.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"\xff" * 2000)
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    return [
        (invalid_json, "Invalid JSON"),
        (invalid_message, "line 2: Invalid message at messages[0]"),
        (foreign, "not a pydantic-ai-harness SqliteStepStore database (missing tables: runs, snapshots)"),
        (corrupt, "unreadable SQLite database"),
        (tmp_path / "missing.db", "Cannot read"),
        (other, "not a SQLite database, .json or .jsonl file"),
    ]


def test_each_bad_file_is_rejected_by_name_and_changes_nothing(tenant, tmp_path, harness_db):
    for path, _ in bad_files(tmp_path, harness_db[0]):
        before = row_counts()
        with pytest.raises(CommandError, match="1 of 1 file"):
            _, err = run_import("--tenant", tenant.slug, str(path))
        assert row_counts() == before, path


def test_the_error_names_the_file_and_the_problem(tenant, tmp_path, harness_db, capsys):
    from io import StringIO

    for path, reason in bad_files(tmp_path, harness_db[0]):
        err = StringIO()
        with pytest.raises(CommandError):
            call_command("import_sessions", "--tenant", tenant.slug, str(path), stderr=err)
        assert str(path) in err.getvalue() and reason in err.getvalue(), err.getvalue()


def test_a_good_file_beside_a_bad_one_is_still_imported(tenant, tmp_path, harness_db):
    path, _ = harness_db
    broken = tmp_path / "broken.json"
    broken.write_text("[")
    with pytest.raises(CommandError, match="1 of 2 file"):
        run_import("--tenant", tenant.slug, str(path), str(broken))
    assert Run.objects.count() == 2


def test_an_unknown_tenant_is_an_error(db, harness_db):
    with pytest.raises(CommandError, match="No tenant 'nope'"):
        run_import("--tenant", "nope", str(harness_db[0]))


def _json_file(tmp_path, name, conversation_id, nul=False):
    body = {
        "conversation_id": conversation_id,
        "run_id": f"{conversation_id}-run",
        "messages": ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json"),
    }
    if nul:
        body["messages"][0]["parts"][-1]["content"] = "before \x00 after"
    path = tmp_path / name
    path.write_text(json.dumps(body))
    return path


def test_a_file_with_a_nul_byte_is_reported_by_name_and_the_files_after_it_still_import(tenant, tmp_path):
    good_before = _json_file(tmp_path, "a.json", "conv-a")
    bad = _json_file(tmp_path, "b.json", "conv-b", nul=True)
    not_utf8 = tmp_path / "c.jsonl"
    not_utf8.write_bytes(b'{"conversation_id": "\xff"}\n')
    good_after = _json_file(tmp_path, "d.json", "conv-d")
    with pytest.raises(CommandError, match="2 of 4 file"):
        out, err = run_import("--tenant", tenant.slug, *map(str, (good_before, bad, not_utf8, good_after)))
    assert set(Conversation.objects.values_list("external_id", flat=True)) == {"conv-a", "conv-d"}


def test_the_summary_names_each_failed_file(tenant, tmp_path):
    from io import StringIO

    bad = _json_file(tmp_path, "bad.json", "conv-b", nul=True)
    good = _json_file(tmp_path, "good.json", "conv-g")
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError):
        call_command("import_sessions", "--tenant", tenant.slug, str(bad), str(good), stdout=out, stderr=err)
    assert f"{bad}: nothing imported" in err.getvalue() and "NUL" in err.getvalue()
    assert "1 of 2 file(s) imported, 1 failed." in out.getvalue()


def test_a_wal_mode_harness_file_is_opened_read_only_and_nothing_appears_beside_it(tenant, harness_db):
    path, _ = harness_db
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    beside_before = sorted(p.name for p in path.parent.iterdir())
    content = path.read_bytes()
    path.chmod(0o444)
    try:
        run_import("--tenant", tenant.slug, str(path))
    finally:
        path.chmod(0o644)
    assert sorted(p.name for p in path.parent.iterdir()) == beside_before
    assert path.read_bytes() == content
    assert Conversation.objects.filter(external_id="conv-h").exists()
