"""Imports stream: a file is read and ingested a chunk at a time inside one transaction per file, so memory follows
the chunk; a bad line late in the file still leaves nothing of that file; a terminal gets a progress line."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest import importers
from sessions_app.models import Conversation, Snapshot
from tests.agents import record_with_harness, weather_messages
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db


def jsonl(tmp_path, count: int, *, bad_last: bool = False):
    path = tmp_path / "runs.jsonl"
    rows = [
        json.dumps(
            {
                "conversation_id": f"conv-{i % 3}",
                "run_id": f"run-{i}",
                "messages": ModelMessagesTypeAdapter.dump_python(weather_messages(f"Weather #{i}?"), mode="json"),
            }
        )
        for i in range(count)
    ]
    if bad_last:
        rows.append('{"conversation_id": "conv-0", "run_id": "run-bad", "messages": [{"kind": "nope"}]}')
    path.write_text("\n".join(rows) + "\n")
    return path


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_file_is_read_a_chunk_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(importers, "CHUNK_SNAPSHOTS", 2)
    chunks = list(importers.iter_import_file(jsonl(tmp_path, 5)))
    assert [len(chunk.snapshots) for chunk in chunks] == [2, 2, 1]


def test_a_harness_store_is_read_a_few_runs_at_a_time(tmp_path, monkeypatch):
    from pydantic_ai_harness.step_persistence import SqliteStepStore

    path = tmp_path / "steps.db"
    record_with_harness(SqliteStepStore(database=path), ["A?", "B?", "C?"], conversation_id="conv-h")
    monkeypatch.setattr(importers, "CHUNK_RUNS", 2)
    chunks = list(importers.iter_import_file(path))
    assert [len({s.run_id for s in chunk.snapshots}) for chunk in chunks] == [2, 1]
    # Each chunk brings its own runs' effects (so it touches and audits only its runs), every run's effects.
    assert all(chunk.tool_effects for chunk in chunks)
    for chunk in chunks:
        assert {e.run_id for e in chunk.tool_effects} == {s.run_id for s in chunk.snapshots}


def test_a_harness_effect_of_a_run_the_store_does_not_list_still_refuses_the_whole_file(
    tenant, tmp_path, monkeypatch
):
    import sqlite3

    from pydantic_ai_harness.step_persistence import SqliteStepStore

    path = tmp_path / "steps.db"
    record_with_harness(SqliteStepStore(database=path), ["A?", "B?", "C?"], conversation_id="conv-h")
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO tool_effects (run_id, tool_call_id, tool_name, status, started_at)"
            " VALUES ('run-elsewhere', 'call-x', 'get_weather', 'completed', '2026-01-01T00:00:00+00:00')"
        )
    monkeypatch.setattr(importers, "CHUNK_RUNS", 2)
    before = row_counts()
    errors = io.StringIO()
    with pytest.raises(CommandError, match="they changed nothing"):
        call_command("import_sessions", "--tenant", tenant.slug, str(path), stdout=io.StringIO(), stderr=errors)
    assert "Tool effect for unknown run 'run-elsewhere'" in errors.getvalue()
    assert row_counts() == before


def test_the_chunks_of_one_file_import_as_one(tenant, tmp_path, monkeypatch):
    monkeypatch.setattr(importers, "CHUNK_SNAPSHOTS", 2)
    call_command("import_sessions", "--tenant", tenant.slug, str(jsonl(tmp_path, 5)), stdout=io.StringIO())
    assert Snapshot.objects.filter(tenant=tenant).count() == 5
    assert Conversation.objects.filter(tenant=tenant).count() == 3


def test_a_bad_line_after_good_chunks_leaves_nothing_of_the_file(tenant, tmp_path, monkeypatch):
    monkeypatch.setattr(importers, "CHUNK_SNAPSHOTS", 2)
    before = row_counts()
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command(
            "import_sessions",
            "--tenant",
            tenant.slug,
            str(jsonl(tmp_path, 5, bad_last=True)),
            stdout=io.StringIO(),
            stderr=err,
        )
    assert "line 6" in err.getvalue()
    assert row_counts() == before


def test_progress_goes_to_a_terminal_only(tenant, tmp_path):
    terminal, pipe = Terminal(), io.StringIO()
    call_command(
        "import_sessions", "--tenant", tenant.slug, str(jsonl(tmp_path, 3)), stdout=io.StringIO(), stderr=terminal
    )
    assert "\r" in terminal.getvalue() and "3 snapshot(s)" in terminal.getvalue()
    call_command("import_sessions", "--tenant", tenant.slug, str(jsonl(tmp_path, 3)), stdout=io.StringIO(), stderr=pipe)
    assert pipe.getvalue() == ""
