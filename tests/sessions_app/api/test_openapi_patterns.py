"""The OpenAPI document's string patterns say exactly what the server's validators take: a generated id the
document calls valid is accepted, and one it calls invalid is refused (Schemathesis's positive and negative
phases rely on it)."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from sessions_app.core.api_input import ID_PATTERN, SEGMENT_ID_PATTERN, Identifier, SegmentId

EDGES = st.sampled_from([" ", "\n", "\t", "\x85", "\xa0", "\u3000", "\x0e", "/", "a", "é", "\ufeff", "\u200b"])
CANDIDATES = st.one_of(st.text(max_size=40), st.builds(lambda a, b, c: a + b + c, EDGES, st.text(max_size=5), EDGES))


def _takes(kind: TypeAdapter[str], value: str) -> bool:
    try:
        kind.validate_python(value)
    except ValidationError:
        return False
    return True


@settings(max_examples=400)
@given(CANDIDATES)
def test_an_id_matches_the_documented_pattern_exactly_when_the_server_takes_it(value):
    documented = 1 <= len(value) <= 200
    assert _takes(TypeAdapter(Identifier), value) == (documented and bool(re.search(ID_PATTERN, value)))
    assert _takes(TypeAdapter(SegmentId), value) == (documented and bool(re.search(SEGMENT_ID_PATTERN, value)))


@settings(max_examples=200)
@given(st.from_regex(SEGMENT_ID_PATTERN).filter(lambda value: len(value) <= 200))
def test_every_id_generated_from_the_pattern_is_taken(value):
    assert _takes(TypeAdapter(SegmentId), value)
