"""A matched message is kept as its latest stored copy, which carries the fields pydantic-ai stamped later."""

import pytest

from sessions_app.transcripts.recovery.hashing import message_hash
from tests.sessions_app.transcripts.recovery.recovery_cases import case


@pytest.mark.parametrize("name", ["plain_tools", "sliding_window", "threaded_runs"])
def test_an_earlier_snapshot_holds_an_unstamped_copy_that_recovery_replaces(name):
    recovered = case(name)
    unstamped = {
        message_hash(m)
        for run in recovered.runs
        for s in run.snapshots
        for m in s.messages
        if m.run_id is None or m.conversation_id is None
    }
    assert unstamped, "a tool-result request is folded into the snapshot before pydantic-ai stamps it"
    for entry in recovered.recovered:
        assert entry.message.run_id is not None
        assert entry.message.conversation_id == recovered.result.conversation_id


def test_the_copy_kept_is_the_one_from_the_latest_snapshot_that_holds_the_message():
    recovered = case("plain_tools")
    latest = {}
    for s in recovered.runs[0].snapshots:
        for m in s.messages:
            latest[message_hash(m)] = m
    for entry in recovered.recovered:
        assert entry.message is latest[message_hash(entry.message)]
