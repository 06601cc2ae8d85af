"""`message_hash` ignores what pydantic-ai stamps later and agrees with the harness; summary recognizers."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import (
    CompactionPart,
    InstructionDeltaPart,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai_harness.conversation_search import _source as harness_source

from sessions_app.transcripts.recovery.alignment import tail_blocks
from sessions_app.transcripts.recovery.hashing import message_hash
from sessions_app.transcripts.recovery.summary_artifacts import (
    SUMMARY_METADATA_KEY,
    is_summary_artifact,
    split_summary_artifact,
    without_summary_artifacts,
)
from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes

WHEN = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def request(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(text, timestamp=WHEN)])


def summary(text: str = "Summary: earlier turns.") -> ModelRequest:
    return ModelRequest(parts=[CompactionPart(content=text, metadata={SUMMARY_METADATA_KEY: True})])


def test_fields_stamped_later_do_not_change_the_hash():
    plain = request("Wie ist das Wetter in Zürich?")
    stamped = replace(plain, timestamp=WHEN, run_id="run-9", conversation_id="conv-9", instructions="Be brief.")
    with_delta = replace(stamped, parts=[*stamped.parts, InstructionDeltaPart(content="Now in German.", id="tone")])
    assert message_hash(plain) == message_hash(stamped) == message_hash(with_delta)


def test_content_changes_the_hash():
    assert message_hash(request("résumé")) != message_hash(request("resume"))
    assert message_hash(ModelResponse(parts=[TextPart("ok")])) != message_hash(ModelResponse(parts=[TextPart("OK")]))


@pytest.mark.parametrize("name", ["summarizing", "threaded_runs", "multilingual"])
def test_hashes_equal_the_harness_hashes_on_real_agent_messages(name):
    messages = [m for run in case(name).runs for s in run.snapshots for m in s.messages]
    assert hashes(messages) == [harness_source.message_hash(m) for m in messages]


def test_a_marked_compaction_part_is_a_summary_artifact():
    assert is_summary_artifact(summary())


def test_a_compaction_part_written_by_an_application_or_a_provider_is_content():
    assert not is_summary_artifact(ModelRequest(parts=[CompactionPart(content="our own note")]))
    provider = CompactionPart(content="x", metadata={SUMMARY_METADATA_KEY: True}, provider_name="anthropic")
    assert not is_summary_artifact(ModelResponse(parts=[provider]))


def test_the_legacy_summary_system_prompt_is_recognized_by_its_full_prefix():
    assert is_summary_artifact(ModelRequest(parts=[SystemPromptPart("Summary of previous conversation:\n\nThey met.")]))
    assert not is_summary_artifact(ModelRequest(parts=[SystemPromptPart("Summary of previous conversation: none")]))


def test_a_summary_merged_with_a_real_turn_is_split_by_part():
    merged = ModelRequest(parts=[*summary().parts, *request("continue").parts])
    artifact, rest = split_summary_artifact(merged)
    assert [p.part_kind for p in artifact.parts] == ["compaction"]
    assert [p.part_kind for p in rest.parts] == ["user-prompt"]
    assert hashes(without_summary_artifacts([merged, summary()])) == hashes([rest])


def test_tail_blocks_lists_the_longest_tail_first_then_the_earliest():
    assert tail_blocks(["a", "b", "c"], ["x", "b", "c", "d", "c"]) == [(2, 1), (1, 4)]
    assert tail_blocks(["a"], ["b"]) == []
    assert tail_blocks([], ["a"]) == []
