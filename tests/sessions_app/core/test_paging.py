"""Page cursors round-trip, and anything that is not one of ours is one BadCursor."""

from datetime import UTC, datetime

import pytest

from sessions_app.core.paging import BadCursor, decode_id, decode_key, encode_key


def test_key_cursors_round_trip_and_reject_foreign_shapes() -> None:
    when = datetime(2026, 5, 1, 8, 30, tzinfo=UTC)
    assert decode_key(encode_key(when, 42), dated=True) == (when, 42)
    assert decode_key(encode_key(17, 3), dated=False) == (17, 3)
    with pytest.raises(BadCursor):
        decode_key("!!!", dated=True)
    with pytest.raises(BadCursor):
        decode_key(encode_key(when, 42)[:-3], dated=True)


def test_id_cursors_are_decimal_ids_and_nothing_else() -> None:
    assert decode_id(None) is None
    assert decode_id("") is None
    assert decode_id("123") == 123
    with pytest.raises(BadCursor, match="not valid"):
        decode_id("12a")
