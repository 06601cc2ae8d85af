"""Without compaction, recovery returns the run's history exactly: text, tools, an orphan result, any script."""

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ToolReturnPart

from model_messages.rendering import message_text
from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes, last_complete

UNCOMPACTED = ["plain_tools", "orphan_tool_result", "credentials"]


@pytest.mark.parametrize("name", UNCOMPACTED)
def test_recovered_record_equals_the_last_snapshot_of_the_conversation(name):
    recovered = case(name)
    assert hashes(recovered.transcript) == hashes(last_complete(recovered.runs[-1]))
    assert hashes(recovered.transcript) == hashes(recovered.result.true_messages)


def test_diacritics_vietnamese_and_chinese_come_back_unchanged():
    text = "\n".join(message_text(m) for m in case("multilingual").transcript)
    for expected in ("Zürich", "résumé", "Zoë", "Hà Nội", "mưa phùn", "北京", "订单 8812"):
        assert expected in text


def test_credentials_in_a_tool_result_are_recovered_verbatim_for_the_redaction_layer():
    results = [
        part.content for m in case("credentials").transcript for part in m.parts if isinstance(part, ToolReturnPart)
    ]
    assert any("sk-live-51HxQe2eZvKYlo2C0aB3dE4fG5hI6jK7lM8nO9pQ" in r for r in results)


def test_the_orphan_tool_result_was_submitted_in_the_history_and_repaired_away_in_storage():
    orphan = case("orphan_tool_result")
    submitted = orphan.result.submitted_histories[orphan.result.run_ids[1]]
    assert any(isinstance(p, ToolReturnPart) and p.tool_call_id.endswith("-orphan") for m in submitted for p in m.parts)
    stored = [p for m in orphan.transcript for p in m.parts if isinstance(p, ToolReturnPart)]
    assert not any(p.tool_call_id.endswith("-orphan") for p in stored)


@pytest.mark.parametrize("name", UNCOMPACTED + ["summarizing"])
def test_recovered_messages_round_trip_through_the_adapter(name):
    transcript = case(name).transcript
    dumped = ModelMessagesTypeAdapter.dump_json(transcript)
    assert hashes(ModelMessagesTypeAdapter.validate_json(dumped)) == hashes(transcript)
