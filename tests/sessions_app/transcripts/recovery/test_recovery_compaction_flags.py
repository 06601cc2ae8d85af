"""`recovered_from_compaction` marks exactly the messages compaction dropped from a run's live history.

The expectation comes from the twin: a message was dropped when some run's uncompacted final history (its
twin) holds it and the compacted run's last complete snapshot no longer does.
"""

import pytest

from sessions_app.transcripts.recovery.hashing import message_hash
from tests.scenarios import SCENARIO_NAMES
from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes, last_complete, survives_in

COMPACTING = [
    name for name in SCENARIO_NAMES if name not in ("plain_tools", "orphan_tool_result", "credentials", "pruned_store")
]


def expected_dropped(name: str) -> list[bool]:
    compacted, twin = case(name), case(name, compaction=False)
    truth = hashes(compacted.result.true_messages)
    dropped = [False] * len(truth)
    # Runs pair up by start order.
    for run, twin_run in zip(compacted.runs, twin.runs, strict=True):
        final, twin_final = last_complete(run), last_complete(twin_run)
        # The twin's final history is the run's uncompacted history: a subsequence of the true record.
        positions, cursor = [], 0
        for key in hashes(twin_final):
            cursor = truth.index(key, cursor)
            positions.append(cursor)
            cursor += 1
        # Compaction drops the oldest messages, so of identical copies the latest ones are the survivors.
        unmatched_final = list(final)
        lost = []
        for message, position in reversed(list(zip(twin_final, positions, strict=True))):
            key = message_hash(message)
            copy = next((m for m in unmatched_final if message_hash(m) == key), None)
            if copy is not None:
                unmatched_final.remove(copy)
            else:
                lost.append((message, position))
        # A request compaction rewrote (split off its system prompt, merged it with the next prompt) survives
        # when its parts are all still there in the requests left over.
        for message, position in lost:
            dropped[position] = not survives_in(message, unmatched_final)
    return dropped


@pytest.mark.parametrize("name", COMPACTING)
def test_flags_mark_exactly_the_messages_compaction_dropped(name):
    recovered = [r for r in case(name).recovered if not r.summary_artifact]
    assert [r.recovered_from_compaction for r in recovered] == expected_dropped(name)


def test_in_a_pruned_store_flags_mark_what_the_last_snapshot_no_longer_holds():
    pruned = case("pruned_store")
    final = last_complete(pruned.runs[-1])
    final_hashes = hashes(final)
    expected = [message_hash(m) not in final_hashes and not survives_in(m, final) for m in pruned.transcript]
    assert any(expected)
    assert [r.recovered_from_compaction for r in pruned.recovered] == expected


@pytest.mark.parametrize("name", ["sliding_window", "summarizing", "threaded_runs"])
def test_compaction_did_drop_something_in_these_scenarios(name):
    assert any(expected_dropped(name))


@pytest.mark.parametrize("name", ["plain_tools", "orphan_tool_result", "credentials"])
def test_nothing_is_flagged_when_nothing_was_compacted(name):
    assert not any(r.recovered_from_compaction for r in case(name).recovered)
