"""Recovery of runs compacted by the harness's SummarizingCompaction: exact record, summaries kept aside."""

import pytest
from pydantic_ai.messages import CompactionPart

from sessions_app.transcripts.recovery.fold import transcript_only
from sessions_app.transcripts.recovery.summary_artifacts import (
    SUMMARY_METADATA_KEY,
    is_receipt_part,
    is_summary_artifact,
)
from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes, reference_record_length

SCENARIOS = ["summarizing", "summarizing_no_first", "threaded_summarizing"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_recovered_transcript_equals_the_twin_run_without_compaction(name):
    compacted = case(name)
    assert hashes(compacted.transcript) == hashes(compacted.result.true_messages)


@pytest.mark.parametrize("name", SCENARIOS)
def test_summaries_the_compaction_wrote_are_flagged_as_artifacts(name):
    artifacts = [r for r in case(name).recovered if r.summary_artifact]
    assert artifacts, "the scenario is expected to compact at least once"
    for artifact in artifacts:
        assert is_summary_artifact(artifact.message)
        assert all(
            (isinstance(p, CompactionPart) and p.metadata and p.metadata[SUMMARY_METADATA_KEY] is True)
            or is_receipt_part(p)
            for p in artifact.message.parts
        )
        assert not artifact.recovered_from_compaction


@pytest.mark.parametrize("name", SCENARIOS)
def test_summaries_are_kept_aside_from_the_transcript_proper(name):
    recovered = case(name).recovered
    assert not any(is_summary_artifact(m) for m in transcript_only(recovered))
    assert len(transcript_only(recovered)) == len(recovered) - sum(r.summary_artifact for r in recovered)


def test_each_summary_appears_once_after_the_messages_recorded_before_it_was_written():
    recovered = case("summarizing").recovered
    artifact_hashes = hashes([r.message for r in recovered if r.summary_artifact])
    assert len(artifact_hashes) == len(set(artifact_hashes))
    # The first summary replaced earlier turns, so transcript messages precede it and follow it.
    first = next(i for i, r in enumerate(recovered) if r.summary_artifact)
    assert 0 < first < len(recovered) - 1


def test_the_harness_reference_doubles_messages_with_the_default_first_message_setting():
    compacted = case("summarizing")
    assert reference_record_length(compacted.store) > len(compacted.result.true_messages)


def test_the_first_request_survives_even_though_compaction_split_off_its_system_prompt():
    compacted = case("summarizing")
    first = compacted.recovered[0]
    assert not first.summary_artifact and not first.recovered_from_compaction
    assert [p.part_kind for p in first.message.parts] == ["system-prompt", "user-prompt"]


def test_receipts_a_compaction_left_are_kept_aside_too():
    # summarizing_no_first runs with receipts=True: "[History before this point ...]" notes.
    recovered = case("summarizing_no_first").recovered
    receipts = [r for r in recovered if any(is_receipt_part(p) for p in r.message.parts)]
    assert receipts and all(r.summary_artifact for r in receipts)
