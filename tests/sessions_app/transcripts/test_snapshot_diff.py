"""The difference between consecutive snapshots (pure): growth, compaction removals and summaries."""

from sessions_app.transcripts.snapshot_diff import DiffMessage, diff_snapshots


def _m(h: str, summary: bool = False) -> DiffMessage:
    return DiffMessage(position=0, content_hash=h, role="user", text=h, summary=summary)


def test_a_growing_history_only_adds():
    diff = diff_snapshots([_m("a"), _m("b")], [_m("a"), _m("b"), _m("c")])
    assert (diff.removed, diff.added, diff.kept) == (0, 1, 2)
    assert not diff.compacted
    assert [row.change for row in diff.rows] == ["kept", "added"]


def test_a_sliding_window_shows_the_dropped_prefix_as_removed():
    diff = diff_snapshots([_m("a"), _m("b"), _m("c"), _m("d")], [_m("a"), _m("d"), _m("e")])
    assert diff.compacted
    assert [m.content_hash for row in diff.rows if row.change == "removed" for m in row.messages] == ["b", "c"]
    assert diff.added == 1


def test_a_summary_replacing_messages_is_flagged():
    diff = diff_snapshots([_m("a"), _m("b"), _m("c")], [_m("s", summary=True), _m("c"), _m("d")])
    assert diff.compacted and diff.summary_added
    assert diff.removed == 2


def test_a_first_snapshot_is_all_added():
    diff = diff_snapshots([], [_m("a"), _m("b")])
    assert (diff.removed, diff.added) == (0, 2)
