"""Recovery of runs compacted by the harness's SlidingWindowCompaction equals the uncompacted twin."""

import pytest

from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes, reference_record_length

SCENARIOS = ["sliding_window", "sliding_window_no_first"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_recovered_record_equals_the_twin_run_without_compaction(name):
    compacted = case(name)
    assert hashes(compacted.transcript) == hashes(compacted.result.true_messages)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_compacted_store_really_lost_messages_from_its_last_snapshot(name):
    # Otherwise the equality above would prove nothing about compaction.
    compacted = case(name)
    last = compacted.runs[-1].snapshots[-1].messages
    assert len(last) < len(compacted.result.true_messages)


@pytest.mark.parametrize("name", SCENARIOS)
def test_nothing_is_missing_and_nothing_is_doubled(name):
    compacted = case(name)
    recovered = hashes(compacted.transcript)
    assert len(recovered) == len(set(recovered)) == len(compacted.result.true_messages)


def test_the_harness_reference_doubles_messages_with_the_default_first_message_setting():
    # ANCHORS.md: a 6-step run, 24 recovered by SnapshotHistorySource for 12 true; we recover the 12.
    compacted = case("sliding_window")
    true_count = len(compacted.result.true_messages)
    assert true_count == 12
    assert reference_record_length(compacted.store) == 2 * true_count
    assert len(compacted.transcript) == true_count


def test_no_summary_artifacts_come_out_of_a_sliding_window():
    assert not any(r.summary_artifact for r in case("sliding_window").recovered)


def test_every_message_is_attributed_to_the_single_run():
    compacted = case("sliding_window")
    assert {r.run_id for r in compacted.recovered} == set(compacted.result.run_ids)
