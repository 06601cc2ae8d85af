"""export_transcript: the recovered transcript out, loadable by pydantic-ai exactly as recovered."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.transcripts.recovery.hashing import message_hash
from tests.scenarios import run_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def compacted(tenant):
    store = InMemoryStepStore()
    result = run_scenario("summarizing", store, conversation_id="conv-x")
    ingest_snapshots(tenant, [parse_snapshot(p) for p in store_as_payloads(store)], source="server", via="import")
    return result


def export(fmt: str, conversation: str = "conv-x") -> str:
    out = StringIO()
    call_command("export_transcript", "--tenant", "acme", "--conversation", conversation, "--format", fmt, stdout=out)
    return out.getvalue()


def test_json_loads_back_as_the_messages_compaction_dropped_and_kept(compacted):
    loaded = ModelMessagesTypeAdapter.validate_json(export("json"))
    assert [message_hash(m) for m in loaded] == [message_hash(m) for m in compacted.true_messages]


def test_json_is_the_stored_bytes_so_a_second_round_trip_is_identical(compacted):
    text = export("json")
    assert ModelMessagesTypeAdapter.dump_json(ModelMessagesTypeAdapter.validate_json(text)).decode() == text


def test_jsonl_has_one_line_per_message_with_its_provenance(compacted):
    lines = [json.loads(line) for line in export("jsonl").splitlines()]
    assert [line["position"] for line in lines] == list(range(len(compacted.true_messages)))
    assert {line["conversation_id"] for line in lines} == {"conv-x"}
    assert set(lines[0]) == {"conversation_id", "position", "run_id", "role", "timestamp", "message"}
    ModelMessagesTypeAdapter.validate_python([line["message"] for line in lines])


def test_markdown_reads_as_a_transcript(compacted):
    text = export("markdown")
    assert text.startswith("# Conversation conv-x")
    assert text.count("\n## ") == len(compacted.true_messages)


def test_an_unknown_or_foreign_conversation_is_an_error(compacted, other_tenant):
    with pytest.raises(CommandError, match="No conversation 'nope' in tenant 'acme'"):
        export("json", conversation="nope")
    with pytest.raises(CommandError, match="No conversation 'conv-x' in tenant 'globex'"):
        call_command("export_transcript", "--tenant", "globex", "--conversation", "conv-x", stdout=StringIO())
